/**
 * The SOURCE of a transfer killed mid-transfer (SIGKILL) and started again on a real lab LAN: the receiver stalls
 * while it is gone (at most the chunks already in flight land), resumes by itself once it is back, and finishes
 * bit-identical with every chunk stored exactly once. (lab-resume.test.ts: the receiver killed, the LAN cut.)
 */
import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  'the source killed mid-transfer and restarted: the transfer resumes and finishes identical',
  { timeout: 170_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 2, lanRate: '100mbit' }, async (lab) => {
      const tmp = mkdtempSync(join(tmpdir(), 'torus-art-srckill-'));
      t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
      const key = randomBytes(32).toString('hex');
      const nodes = lab.hosts.map((h) => ({ id: `h${h.index}`, ip: h.lanIp, port: 52600 }));
      const start = (host: number): Peer => {
        const p = new Peer(
          lab.spawn(host, process.execPath, [
            STANDALONE,
            JSON.stringify({ nodeId: `h${host}`, dataDir: join(tmp, `h${host}`), port: 52600, key, nodes }),
          ]),
        );
        t.teardown(() => {
          p.child.kill('SIGKILL');
        });
        return p;
      };
      const h0 = start(0);
      const h1 = start(1);
      await Promise.all([h0.next((m) => m.ready, 'h0 ready'), h1.next((m) => m.ready, 'h1 ready')]);
      const file = join(tmp, 'w.bin');
      const data = randomBytes(CHUNKS * MiB);
      writeFileSync(file, data);
      h0.send({ cmd: 'add', path: file, chunkSize: MiB });
      const art = await h0.next((m) => m.id, 'add');
      h1.send({
        cmd: 'held',
        event: {
          type: 'ArtifactHeld',
          nodeId: 'h0',
          artifactId: art.id,
          name: 'w',
          bytes: art.bytes,
          chunks: art.chunks,
          have: art.chunks,
        },
      });

      h1.send({ cmd: 'fetch', id: art.id });
      await h1.until('h1 has 8 chunks', (p) => p.have >= 8);
      h0.child.kill('SIGKILL');
      await new Promise((r) => h0.child.once('exit', r));
      const atKill = h1.last!.have;
      await new Promise((r) => setTimeout(r, 3000));
      const whileDown = h1.last!;
      t.equal(whileDown.state, 'running', 'the transfer waits for its source instead of failing');
      // `have` counts journaled chunks. After the kill it can still grow by what had left the source: up to 6 chunks on
      // the wire (per source), 8 received and being verified and written, and those written but waiting for their
      // timed sync (≤ 500 ms of this 100 Mbit/s link: 6 chunks). Then nothing more.
      t.ok(
        whileDown.have - atKill <= 6 + 8 + 6,
        `no progress without the source beyond what had left it (${atKill} → ${whileDown.have})`,
      );
      await new Promise((r) => setTimeout(r, 2000));
      t.equal(h1.last!.have, whileDown.have, 'stalled while the source is down');
      t.ok(whileDown.have < CHUNKS, 'not finished while the source was down');

      const again = start(0); // the same store: the artifact is still complete there
      await again.next((m) => m.ready, 'h0 restarted');
      const done = await h1.until('h1 finished', (p) => p.state === 'complete' || p.state === 'failed', 120_000);
      t.equal(done.state, 'complete', JSON.stringify(done.error));
      t.same(Object.keys(done.bySource), ['h0']);
      t.equal(done.bySource.h0!.chunks, CHUNKS, 'every chunk stored exactly once (none lost, none twice)');
      t.ok(
        readFileSync(join(tmp, 'h1', 'artifacts', art.id, 'files', 'w.bin')).equals(data),
        'bit-identical after the source came back',
      );
    });
  },
);
