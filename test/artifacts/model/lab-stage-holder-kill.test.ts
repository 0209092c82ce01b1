/**
 * A holder killed (SIGKILL) in the middle of a stage transfer, on a real lab LAN with standalone artifact peers: the
 * receiver, fetching one pipeline stage of a model from two holders, continues from the other one and finishes
 * with exactly its stage's chunks, each received once (none lost with the holder, none fetched again).
 */
import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Lab, withLab } from '../../../src/lab/index.js';
import { Peer, STANDALONE } from '../lab-peer.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import { stageChunks } from '../../../src/artifacts/model/stage-chunks.js';
import { decodeManifest } from '../../../src/artifacts/manifest.js';

const why =
  Lab.unavailableReason() ??
  (existsSync(STANDALONE) ? undefined : 'dist/artifacts/standalone.js is missing (npm run build)');
const MiB = 1024 * 1024;

t.test(
  'a holder killed mid-transfer: the stage is finished from the other holder, no chunk fetched twice',
  { timeout: 170_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3, lanRate: '100mbit' }, async (lab) => {
      const tmp = mkdtempSync(join(tmpdir(), 'torus-stage-kill-'));
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
      const [h0, h1, h2] = [start(0), start(1), start(2)];
      await Promise.all([h0, h1, h2].map((p, i) => p.next((m) => m.ready, `h${i} ready`)));
      const src = join(tmp, 'model');
      makeModel({ out: src, bytes: 64 * MiB, layers: 4, shards: 2, seed: 'kill' });
      // Both holders add the same directory: the same bytes, the same artifact.
      h0.send({ cmd: 'add', path: src });
      const art = await h0.next((m) => m.id, 'h0 add', 120_000);
      h1.send({ cmd: 'add', path: src });
      t.equal((await h1.next((m) => m.id, 'h1 add', 120_000)).id, art.id, 'one artifact');
      t.ok(art.model, 'a model');
      for (const holder of ['h0', 'h1'])
        h2.send({
          cmd: 'held',
          event: {
            type: 'ArtifactHeld',
            nodeId: holder,
            artifactId: art.id,
            name: 'model',
            bytes: art.bytes,
            chunks: art.chunks,
            have: art.chunks,
            ...(holder === 'h0' ? { model: art.model } : {}),
          },
        });
      const manifest = decodeManifest(readFileSync(join(tmp, 'h0', 'artifacts', art.id, 'manifest.json')), art.id);
      const stage = { fromLayer: 0, toLayer: 2 };
      const want = stageChunks(manifest, art.model, stage);

      h2.send({ cmd: 'fetch', id: art.id, stage });
      await h2.until('a fifth of the stage', (p) => p.have >= want.length / 5);
      h0.child.kill('SIGKILL');
      await new Promise((r) => h0.child.once('exit', r));
      const done = await h2.next((m) => m.done === art.id, 'the stage fetched', 120_000);
      t.equal(done.state, 'complete', JSON.stringify(done.error));
      const by = done.bySource as Record<string, { chunks: number }>;
      t.ok((by.h0?.chunks ?? 0) > 0 && (by.h1?.chunks ?? 0) > 0, `both holders served (${JSON.stringify(by)})`);
      t.equal(
        Object.values(by).reduce((a, x) => a + x.chunks, 0),
        want.length,
        'every chunk of the stage received exactly once',
      );
      const journal = readFileSync(join(tmp, 'h2', 'artifacts', art.id, 'verified.log'));
      const indices = Array.from({ length: journal.length / 4 }, (_, i) => journal.readUInt32LE(4 * i));
      t.same(
        [...indices].sort((a, b) => a - b),
        want,
        'the store holds exactly the stage, each chunk journaled once',
      );
      t.ok(want.length < art.chunks * 0.75, `a stage, not the model (${want.length} of ${art.chunks} chunks)`);
    });
  },
);
