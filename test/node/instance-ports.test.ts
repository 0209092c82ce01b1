/**
 * A real node plans instance ports from its --instance-ports band (default 10000-19999), outside the host's
 * ephemeral range, and warns at start when a configured band overlaps that range.
 */
import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostEphemeralRange } from '../../src/native/ephemeral-ports.js';
import { readApiTokenIn } from '../../src/protocols/data-dir-files.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const PREVIEW = { workload: { id: 'w', memoryBytes: 2 ** 20, layers: 4 }, sharding: 'pipeline', backend: 'ring' };

async function startNode(t: Test, extra: string[]): Promise<{ port: number; dataDir: string; stderr: () => string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'torus-ports-'));
  const child: ChildProcess = spawn(
    process.execPath,
    [MAIN, '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--no-mdns', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => void (err += c.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = / listening on [^:]+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`node exited with ${code}: ${err}`)));
  });
  return { port, dataDir, stderr: () => err };
}

/** The ports of every option of `rounds` previews (each preview plans with a seed of its own). */
async function previewPorts(node: { port: number; dataDir: string }, rounds: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const res = await fetch(`http://127.0.0.1:${node.port}/v1/placements/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${readApiTokenIn(node.dataDir)}`, 'content-type': 'application/json' },
      body: JSON.stringify(PREVIEW),
    });
    const body = (await res.json()) as { previews: { plan?: { instance: { port: number } } }[] };
    if (res.status !== 200) throw new Error(`preview: ${res.status} ${JSON.stringify(body)}`);
    for (const p of body.previews) if (p.plan) ports.push(p.plan.instance.port);
  }
  return ports;
}

t.test('by default every plan port and its successor lie outside the ephemeral range', async (t) => {
  const node = await startNode(t, []);
  const ports = await previewPorts(node, 20);
  t.ok(ports.length >= 20, `${ports.length} plans`);
  const host = hostEphemeralRange() ?? { min: 32_768, max: 60_999 };
  const inside = ports.filter((p) => p + 1 >= host.min && p <= host.max);
  t.same(inside, [], `none in ${host.min}-${host.max}`);
  t.ok(
    ports.every((p) => p >= 10_000 && p < 19_999),
    'all in 10000-19999',
  );
  t.notMatch(node.stderr(), /overlaps this host's ephemeral ports/);
});

t.test('--instance-ports: the band the node plans in; one inside the ephemeral range is warned of', async (t) => {
  const host = hostEphemeralRange();
  const band = host ? { min: host.min + 100, max: host.min + 101 } : { min: 40_000, max: 40_001 };
  const node = await startNode(t, ['--instance-ports', `${band.min}-${band.max}`]);
  const ports = await previewPorts(node, 3);
  t.ok(ports.length > 0);
  t.ok(
    ports.every((p) => p === band.min),
    'the only port whose successor is in the band',
  );
  if (host) t.match(node.stderr(), `--instance-ports ${band.min}-${band.max} overlaps this host's ephemeral ports`);
});
