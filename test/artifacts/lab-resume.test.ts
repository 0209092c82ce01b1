/**
 * Transfers over a real lab LAN (100 Mbit/s) between standalone artifact peers (src/artifacts/standalone.ts: the
 * real store, peer routes, transfer and writer, on a static cluster state, so no time goes to cluster formation):
 * a full disk (a real 8 MiB tmpfs) refused before any byte moves; a LAN cut mid-transfer then restored; a receiver
 * killed mid-transfer and started again. Both interrupted transfers finish bit-identical, and the restarted one
 * fetches only the chunks its journal did not hold.
 */
import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Lab, withLab } from '../../src/lab/index.js';
import { Peer, STANDALONE } from './lab-peer.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why =
  Lab.unavailableReason() ??
  (existsSync(STANDALONE) ? undefined : 'dist/artifacts/standalone.js is missing (npm run build)');
const MiB = 1024 * 1024;
const CHUNKS = 48;

t.test(
  'transfers over a lab LAN: full disk refused, resume after a cut link and after a killed receiver',
  { timeout: 170_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3, lanRate: '100mbit' }, async (lab) => {
      const tmp = mkdtempSync(join(tmpdir(), 'torus-art-lab-'));
      // The full-disk peer has its own data dir on a tmpfs (a mount made before it starts: \`ip netns exec\` gives it
      // its own mount namespace, so the disk stays full for it whatever happens outside).
      const mnt = join(tmp, 'full', 'artifacts');
      t.teardown(() => {
        try {
          execFileSync('umount', ['-l', mnt], { stdio: 'ignore' });
        } catch {
          /* not mounted */
        }
        rmSync(tmp, { recursive: true, force: true });
      });
      const key = randomBytes(32).toString('hex');
      const nodes = lab.hosts.map((h) => ({ id: `h${h.index}`, ip: h.lanIp, port: 52600 }));
      const start = (host: number, extra: Record<string, unknown> = {}): Peer => {
        const p = new Peer(
          lab.spawn(host, process.execPath, [
            STANDALONE,
            JSON.stringify({ nodeId: `h${host}`, dataDir: join(tmp, `h${host}`), port: 52600, key, nodes, ...extra }),
          ]),
        );
        t.teardown(() => {
          p.child.kill('SIGKILL');
        });
        return p;
      };
      mkdirSync(mnt, { recursive: true });
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mnt]);
      const peers = [
        start(0),
        start(1, { resume: true }),
        start(2),
        start(2, { dataDir: join(tmp, 'full'), port: 52601 }),
      ];
      await Promise.all(peers.map((p, i) => p.next((m) => m.ready, `peer ${i} ready`)));
      const [h0, h1, h2, full] = peers as [Peer, Peer, Peer, Peer];
      const file = join(tmp, 'w.bin');
      const data = randomBytes(CHUNKS * MiB);
      writeFileSync(file, data);
      h0.send({ cmd: 'add', path: file, chunkSize: MiB });
      const art = await h0.next((m) => m.id, 'add');
      const held = {
        type: 'ArtifactHeld',
        nodeId: 'h0',
        artifactId: art.id,
        name: 'w',
        bytes: art.bytes,
        chunks: art.chunks,
        have: art.chunks,
      };
      for (const p of peers) p.send({ cmd: 'held', event: held });
      const stored = (host: number) => readFileSync(join(tmp, `h${host}`, 'artifacts', art.id, 'files', 'w.bin'));

      // A full disk: refused before the transfer, naming the node and the bytes missing; nothing left behind.
      full.send({ cmd: 'fetch', id: art.id });
      const refused = await full.next((m) => m.refused === art.id || m.done === art.id, 'the refusal');
      t.equal(refused.code, 'TORUS_ARTIFACT_NO_SPACE');
      t.match(
        refused.message,
        /node h2 \(h2\) cannot receive artifact [0-9a-f]{64}: it needs 50331648 bytes, \d+ are free in .*: \d+ bytes missing/,
      );
      t.notOk(existsSync(join(mnt, art.id)), 'no partial artifact left on the full disk');
      full.child.kill('SIGKILL');

      // Cut h2 off the LAN mid-transfer and restore it: the transfer continues and finishes identical.
      h2.send({ cmd: 'fetch', id: art.id });
      const cutAt = await h2.until('h2 has 6 chunks', (p) => p.have >= 6);
      await lab.cut(2, 'lan');
      await new Promise((r) => setTimeout(r, 4000));
      const during = h2.last!.have;
      await lab.restore(2, 'lan');
      const afterCut = await h2.until(
        'h2 transfer ends',
        (p) => p.state === 'complete' || p.state === 'failed',
        90_000,
      );
      t.equal(afterCut.state, 'complete', JSON.stringify(afterCut.error));
      t.ok(
        stored(2).equals(data),
        `identical after the cut (cut at ${cutAt.have}/${CHUNKS}, ${during} held while cut)`,
      );
      t.equal(
        Object.values(afterCut.bySource).reduce((s, x) => s + x.chunks, 0),
        CHUNKS,
        'the cut lost nothing: every chunk fetched exactly once',
      );

      // Kill the receiver h1 mid-transfer, start it again: it resumes from its journal.
      h1.send({ cmd: 'fetch', id: art.id });
      await h1.until('h1 has 6 chunks', (p) => p.have >= 6);
      h1.child.kill('SIGKILL');
      await new Promise((r) => h1.child.once('exit', r));
      const journal = readFileSync(join(tmp, 'h1', 'artifacts', art.id, 'verified.log'));
      const heldAtKill = journal.length / 4;
      t.ok(heldAtKill >= 6, `${heldAtKill} chunks verified on disk at the kill`);
      const again = start(1, { resume: true });
      await again.next((m) => m.ready, 'h1 restarted');
      again.send({ cmd: 'held', event: held }); // the static state is gone with the process; the resume waits for a source
      const resumed = await again.until(
        'h1 resumed and finished',
        (p) => p.state === 'complete' || p.state === 'failed',
        90_000,
      );
      t.equal(resumed.state, 'complete', JSON.stringify(resumed.error));
      const fetched = Object.values(resumed.bySource).reduce((s, x) => s + x.chunks, 0);
      t.equal(
        fetched,
        CHUNKS - heldAtKill,
        `after the restart only the ${CHUNKS - heldAtKill} missing chunks were fetched`,
      );
      t.ok(stored(1).equals(data), 'identical after kill and restart');
    });
  },
);
