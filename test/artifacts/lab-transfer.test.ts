/**
 * Artifacts between real nodes (dist/main.js) in lab namespaces: `artifacts add` on one node, the holding in every
 * node's replicated state, `artifacts get` on the other (a transfer between the nodes, verified, bit-identical
 * with modes), `artifacts ls`. lab-resume.test.ts covers the full disk, the cut link and the killed receiver.
 */
import t from 'tap';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Lab, withLab } from '../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason, type E2eNode } from '../e2e/lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const MiB = 1024 * 1024;

interface Held {
  id: string;
  holders: { node: string; have: number; complete: boolean }[];
}

const holding = async (n: E2eNode, id: string, of: E2eNode): Promise<number> =>
  (await n.tryGet<Held>(`/v1/artifacts/${id}`))?.holders.find((h) => h.node === of.id)?.have ?? -1;

t.test('artifacts on a 2-node lab LAN: CLI add, get, ls', { timeout: 178_000, skip: skipOrFail(why) }, async (t) => {
  await withLab(t, { hosts: 2, lanRate: '100mbit' }, async (lab) => {
    const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--iface-type', 'lan0=ethernet'] });
    await c.converged(120_000);
    const [h0, h1] = c.nodes as [E2eNode, E2eNode];

    // 1. add on h0 (a directory), get on h1 through the CLI: bit-identical; every node's state lists the holder.
    const src = join(c.tmpDir, 'model');
    mkdirSync(join(src, 'sub'), { recursive: true });
    writeFileSync(join(src, 'weights.bin'), randomBytes(3 * MiB + 5), { mode: 0o755 });
    writeFileSync(join(src, 'sub/config.json'), '{"layers":2}');
    const add = await c.cli(
      0,
      ['artifacts', 'add', src, '--name', 'model', '--chunk-size', '1MiB', '--data-dir', h0.dataDir],
      60_000,
    );
    t.equal(add.code, 0, `add: ${add.stderr}`);
    const small = add.stdout.trim();
    t.match(small, /^[0-9a-f]{64}$/);
    await c.until(
      'every node lists h0 as holder',
      async () => (await Promise.all(c.nodes.map((n) => holding(n, small, h0)))).every((h) => h === 5),
      60_000,
    );
    const out = join(c.tmpDir, 'out1');
    const get = await c.cli(1, ['artifacts', 'get', small, '--to', out, '--data-dir', h1.dataDir], 90_000);
    t.equal(get.code, 0, get.stderr);
    t.ok(
      readFileSync(join(out, 'weights.bin')).equals(readFileSync(join(src, 'weights.bin'))),
      'weights.bin identical',
    );
    t.equal(readFileSync(join(out, 'sub/config.json'), 'utf8'), '{"layers":2}');
    await c.until(
      'every node lists h1 as a holder too',
      async () => (await Promise.all(c.nodes.map((n) => holding(n, small, h1)))).every((h) => h === 5),
      60_000,
    );
    const ls = await c.cli(1, ['artifacts', 'ls'], 60_000);
    t.match(ls.stdout, h1.id, 'h1 listed as a holder');
    t.ok(statSync(join(out, 'weights.bin')).mode & 0o100, 'the executable bit survived');
    t.match(ls.stdout, small.slice(0, 16));
  });
});
