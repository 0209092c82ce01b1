/**
 * Mailbox benchmark: host ↔ actor round trips (one in flight), one-way messages under load (many in flight),
 * for ~100 B and 1 MiB payloads — the runtime's msgpack path against plain postMessage structured clone,
 * side by side in one run, with the ratio. Run: `npm run bench -- mailbox` (or node build/benchmarks/mailbox/index.js).
 */
import { Worker } from 'node:worker_threads';
import { Runtime } from '../../src/runtime/runtime.js';
import { printTable, type BenchRow } from '../table.js';

const quick = process.argv.includes('--quick');
const json = process.argv.includes('--json');
const rounds = quick ? 3 : 7;

const small = {
  who: 'placement-planner',
  what: 'link-measured',
  rttMs: 0.42,
  bandwidthBps: 9.4e9,
  at: 1_764_460_800_000,
  ok: true,
  tags: ['tb', 'lan'],
};

class PlainClient {
  readonly worker = new Worker(new URL('./plain-worker.js', import.meta.url));
  #corr = 0;
  #waiting = new Map<number, (v: unknown) => void>();
  constructor() {
    this.worker.on('message', (m: { corr: number; payload: unknown }) => {
      this.#waiting.get(m.corr)?.(m.payload);
      this.#waiting.delete(m.corr);
    });
  }
  request(type: string, payload?: unknown): Promise<unknown> {
    const corr = ++this.#corr;
    return new Promise((resolve) => {
      this.#waiting.set(corr, resolve);
      this.worker.postMessage({ type, corr, payload });
    });
  }
  tick(): void {
    this.worker.postMessage({ type: 'tick' });
  }
}

async function _median(run: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < rounds; i++) values.push(await run());
  values.sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)]!;
}

async function perSecond(count: number, body: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await body();
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function main(): Promise<void> {
  const runtime = new Runtime();
  await runtime.supervise({ name: 'echo', module: new URL('./echo-actor.js', import.meta.url) });
  const plain = new PlainClient();
  await plain.request('echo', 1);
  // Warm both paths up (JIT, msgpackr's structure cache) before anything is timed.
  for (let i = 0; i < 2_000; i++) {
    await runtime.request('echo', { type: 'echo', payload: small });
    await plain.request('echo', small);
  }
  const rows: BenchRow[] = [];
  const compare = async (
    label: string,
    unit: string,
    viaRuntime: () => Promise<number>,
    viaPlain: () => Promise<number>,
  ): Promise<void> => {
    // Interleave the two so drift in machine load hits both sides alike.
    const r: number[] = [];
    const p: number[] = [];
    for (let i = 0; i < rounds; i++) {
      r.push(await viaRuntime());
      p.push(await viaPlain());
    }
    const mid = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    // The ratio is the median of each round's runtime/postMessage pair: the two halves of a pair ran back to back
    // under the same load, so their ratio is steadier than a ratio of separate medians.
    const ratios = r.map((x, i) => x / p[i]!);
    rows.push({
      case: label,
      unit,
      runtime: Math.round(mid(r)),
      postMessage: Math.round(mid(p)),
      ratio: +mid(ratios).toFixed(2),
      'ratio range': `${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}`,
    });
    if (!json) process.stderr.write(`  measured ${label}\n`);
  };

  const rtCount = quick ? 2_000 : 10_000;
  await compare(
    'round trip, ~100 B',
    'round trips/s',
    () =>
      perSecond(rtCount, async () => {
        for (let i = 0; i < rtCount; i++) await runtime.request('echo', { type: 'echo', payload: small });
      }),
    () =>
      perSecond(rtCount, async () => {
        for (let i = 0; i < rtCount; i++) await plain.request('echo', small);
      }),
  );

  const loadCount = quick ? 50_000 : 200_000;
  await compare(
    'one-way under load, ~100 B',
    'messages/s',
    () =>
      perSecond(loadCount, async () => {
        const before = await runtime.request<number>('echo', { type: 'seen' });
        for (let i = 0; i < loadCount; i++) runtime.send('echo', { type: 'tick', ...small });
        const after = await runtime.request<number>('echo', { type: 'seen' }, { timeoutMs: 120_000 });
        if (after - before !== loadCount) throw new Error(`lost messages: ${after - before} of ${loadCount}`);
      }),
    () =>
      perSecond(loadCount, async () => {
        const before = (await plain.request('seen')) as number;
        for (let i = 0; i < loadCount; i++) plain.worker.postMessage({ type: 'tick', ...small });
        const after = (await plain.request('seen')) as number;
        if (after - before !== loadCount) throw new Error('lost messages');
      }),
  );

  const bigCount = quick ? 100 : 400;
  await compare(
    'round trip, 1 MiB Float32Array',
    'round trips/s',
    () =>
      perSecond(bigCount, async () => {
        let payload: Float32Array = new Float32Array(1 << 18).fill(1);
        for (let i = 0; i < bigCount; i++)
          payload = await runtime.request<Float32Array>('echo', { type: 'echo', payload });
        if (payload.length !== 1 << 18 || payload[7] !== 1) throw new Error('payload damaged');
      }),
    () =>
      perSecond(bigCount, async () => {
        let payload: Float32Array = new Float32Array(1 << 18).fill(1);
        for (let i = 0; i < bigCount; i++) payload = (await plain.request('echo', payload)) as Float32Array;
        if (payload.length !== 1 << 18) throw new Error('payload damaged');
      }),
  );

  await runtime.shutdown();
  await plain.worker.terminate();
  printTable(
    'mailbox: runtime (msgpack records, batched; large payloads transferred) vs plain postMessage (structured clone)',
    rows,
    json,
    `targets: under load >= 1.0x, round trips >= 0.7x, 1 MiB >= 1.5x. ${rounds} interleaved rounds in one process: medians of the rates, and the median (and range) of the per-round ratios.`,
  );
}

await main();
