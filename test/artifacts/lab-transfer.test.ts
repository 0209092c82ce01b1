/**
 * Artifacts between 3 real nodes (dist/main.js) in lab namespaces on a shaped LAN: the CLI round trip across nodes,
 * and a full disk refused before the transfer (a real 8 MiB tmpfs).
 * lab-resume.test.ts covers the cut link and the killed node.
 */
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Lab, withLab } from '../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason, type E2eNode } from '../e2e/lab-cluster.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const MiB = 1024 * 1024;

interface Transfer { id: string; state: string; have: number; chunks: number; bySource: Record<string, { chunks: number }>; error?: { message: string } }
interface Held { id: string; holders: { node: string; have: number; complete: boolean }[] }

async function post(n: E2eNode, path: string, body: unknown = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(n.api + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
  return { status: res.status, body: await res.json() };
}
const transferOf = async (n: E2eNode, id: string): Promise<Transfer | undefined> => (await n.tryGet<{ transfers: Transfer[] }>('/v1/artifacts/transfers'))?.transfers.find((x) => x.id === id);
const holding = async (n: E2eNode, id: string, of: E2eNode): Promise<number> => (await n.tryGet<Held>(`/v1/artifacts/${id}`))?.holders.find((h) => h.node === of.id)?.have ?? -1;
const stored = (n: E2eNode, id: string, file: string) => readFileSync(join(n.dataDir, 'artifacts', id, 'files', file));

t.test('artifacts on a 3-node lab LAN: CLI round trip, full disk refused', { timeout: 178_000, skip: why ? `skipped: ${why}` : false }, async (t) => {
  await withLab(t, { hosts: 3, lanRate: '100mbit' }, async (lab) => {
    const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--iface-type', 'lan0=ethernet'] });
    await c.converged(120_000);
    const [h0, h1, h2] = c.nodes as [E2eNode, E2eNode, E2eNode];
    const h3 = h2; // the full-disk case runs on h2 before its cut-link case

    // 1. add on h0 (a directory), get on h1 through the CLI: bit-identical; every node's state lists the holder.
    const src = join(c.tmpDir, 'model');
    mkdirSync(join(src, 'sub'), { recursive: true });
    writeFileSync(join(src, 'weights.bin'), randomBytes(3 * MiB + 5));
    writeFileSync(join(src, 'sub/config.json'), '{"layers":2}');
    const add = await c.cli(0, ['artifacts', 'add', src, '--name', 'model', '--chunk-size', '1MiB', '--data-dir', h0.dataDir], 60_000);
    t.equal(add.code, 0, `add: ${add.stderr}`);
    const small = add.stdout.trim();
    t.match(small, /^[0-9a-f]{64}$/);
    await c.until('every node lists h0 as holder', async () => (await Promise.all(c.nodes.map((n) => holding(n, small, h0)))).every((h) => h === 5), 60_000);
    const out = join(c.tmpDir, 'out1');
    const get = await c.cli(1, ['artifacts', 'get', small, '--to', out, '--data-dir', h1.dataDir], 90_000);
    t.equal(get.code, 0, get.stderr);
    t.ok(readFileSync(join(out, 'weights.bin')).equals(readFileSync(join(src, 'weights.bin'))), 'weights.bin identical');
    t.equal(readFileSync(join(out, 'sub/config.json'), 'utf8'), '{"layers":2}');
    const ls = await c.cli(2, ['artifacts', 'ls'], 60_000);
    t.match(ls.stdout, small.slice(0, 16));

    // 2. A full disk is refused before any byte moves: the message names the node and the bytes missing.
    const big = join(c.tmpDir, 'big.bin');
    writeFileSync(big, randomBytes(48 * MiB));
    const addBig = await c.cli(0, ['artifacts', 'add', big, '--chunk-size', '1MiB', '--data-dir', h0.dataDir], 60_000);
    t.equal(addBig.code, 0, addBig.stderr);
    const id = addBig.stdout.trim();
    await c.until('h3 knows the big artifact', async () => (await holding(h3, id, h0)) === 48, 60_000);
    const mnt = join(h3.dataDir, 'artifacts');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mnt]);
    t.teardown(() => { try { execFileSync('umount', ['-l', mnt]); } catch { /* already unmounted */ } });
    try {
      const full = await c.cli(2, ['artifacts', 'fetch', id, '--data-dir', h3.dataDir], 60_000);
      t.equal(full.code, 1);
      t.match(full.stderr, h3.id, 'names the node');
      t.match(full.stderr, /bytes missing \(TORUS_ARTIFACT_NO_SPACE\)/);
      t.equal(await holding(h0, id, h3), -1, 'h3 holds nothing');
    } finally {
      execFileSync('umount', [mnt]);
    }

  });
});
