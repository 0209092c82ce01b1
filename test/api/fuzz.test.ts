import t from 'tap';
import { raw, startApi } from './fixtures/harness.js';

/** mulberry32: a seeded PRNG so a failing case can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function randomJson(r: () => number, depth = 0): unknown {
  const pick = Math.floor(r() * (depth > 3 ? 6 : 8));
  const str = (): string =>
    [
      '',
      'workload',
      'id',
      'memoryBytes',
      'layers',
      'ring',
      'exec',
      '__proto__',
      'constructor',
      'x'.repeat(300),
      '\u0000',
      '☃',
    ][Math.floor(r() * 12)]!;
  switch (pick) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return [0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 4][Math.floor(r() * 7)];
    case 3:
      return str();
    case 4:
      return Math.floor(r() * 1e6);
    case 5:
      return str() + String(r());
    case 6:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomJson(r, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: Math.floor(r() * 5) }, () => [str(), randomJson(r, depth + 1)]));
  }
}

const valid: Record<string, Record<string, unknown>> = {
  '/v1/instances': {
    workload: { id: 'w', memoryBytes: 1024, layers: 4, kind: 'exec', command: 'true' },
    sharding: 'pipeline',
    backend: 'ring',
    minNodes: 1,
    requiredNodes: ['node-a'],
  },
  '/v1/placements/preview': {
    workload: { id: 'w', memoryBytes: 1024, layers: 4, hiddenSize: 8 },
    sharding: 'tensor',
    backend: 'jaccl',
  },
  '/v1/bench/ring': {
    nodes: ['node-a', 'node-b'],
    ops: ['all-reduce'],
    dtype: 'float32',
    minBytes: 8,
    maxBytes: 16,
    stepFactor: 2,
    iterations: 1,
    warmup: 0,
  },
};

/** Replaces, deletes or adds one field somewhere in a valid body. */
function mutate(r: () => number, body: Record<string, unknown>): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  let target: Record<string, unknown> = copy;
  if (r() < 0.5 && typeof copy.workload === 'object' && copy.workload)
    target = copy.workload as Record<string, unknown>;
  const keys = Object.keys(target);
  const key = r() < 0.8 && keys.length ? keys[Math.floor(r() * keys.length)]! : 'extra';
  if (r() < 0.3) delete target[key];
  else target[key] = randomJson(r, 2);
  return copy;
}

function garbage(r: () => number): string {
  const n = Math.floor(r() * 200);
  return Array.from({ length: n }, () => String.fromCharCode(Math.floor(r() * 128))).join('');
}

t.test('random, mutated and huge bodies get 4xx (or a legitimate answer) and the node stays healthy', async (t) => {
  const { api, node } = await startApi(t, { bodyLimitBytes: 16 * 1024 });
  node.benchStepMs = 1;
  const seed = Number(process.env.TORUS_FUZZ_SEED ?? 20_240_601);
  const r = rng(seed);
  t.comment(`seed ${seed}`);
  const statuses = new Map<number, number>();
  let cases = 0;
  for (const path of Object.keys(valid)) {
    for (let i = 0; i < 150; i++) {
      const kind = i % 5;
      const body =
        kind === 0
          ? JSON.stringify(randomJson(r))
          : kind === 1
            ? garbage(r)
            : kind === 2
              ? JSON.stringify(mutate(r, valid[path]!))
              : kind === 3
                ? JSON.stringify(mutate(r, valid[path]!)).slice(0, Math.floor(r() * 80)) // truncated
                : r() < 0.5
                  ? '['.repeat(20_000)
                  : JSON.stringify({ workload: { id: 'x'.repeat(40_000) } }); // deep or huge
      const res = await raw(api.url, 'POST', path, body);
      cases++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500 || res.status < 200) t.fail(`${path} ${res.status} for body ${body.slice(0, 200)}`);
      if (res.status >= 400) {
        const json = res.json() as { error?: { code?: unknown; message?: unknown } };
        if (typeof json.error?.code !== 'string' || typeof json.error.message !== 'string')
          t.fail(`bad error shape: ${res.text.slice(0, 200)}`);
      }
    }
  }
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
  t.ok((statuses.get(400) ?? 0) > cases / 3, 'most are rejected as invalid');
  t.ok(statuses.has(413), 'huge bodies hit the limit');
  t.ok(
    [...statuses.keys()].every((s) => s < 500),
    'no 5xx',
  );
  const health = await raw(api.url, 'GET', '/v1/node');
  t.equal(health.status, 200, 'the node still answers');
  const topo = await raw(api.url, 'GET', '/v1/topology');
  t.equal((topo.json() as { nodes: unknown[] }).nodes.length, 3, 'state intact');
});
