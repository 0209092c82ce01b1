/**
 * Real nodes on a lab LAN: a model added on one of 3 hosts, an exec instance of 3 pipeline stages whose workload
 * names it. Each node receives only its stage's chunks (the bytes its transfer received, and the blocks its store
 * allocated, stay within its shard's bytes + 1 %, far from the whole model), and each runner starts with
 * TORUS_MODEL_DIR, which an independent reader (Python, standard library) finds exactly the stage's tensors in,
 * bytes identical to the source. `artifacts ls` and the API show which layers each node holds.
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Lab, withLab } from '../../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason, type E2eNode } from '../../e2e/lab-cluster.js';
import { profiled } from '../../actors/runner-supervisor/fixtures/lab-runners.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import { stageTensors } from '../../../src/artifacts/model/shard-writer.js';
import { chunksBytes, stageChunks } from '../../../src/artifacts/model/stage-chunks.js';
import { decodeManifest } from '../../../src/artifacts/manifest.js';
import type { ModelRecord } from '../../../src/protocols/model-record.js';

t.setTimeout(420_000);
const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const READER = fileURLToPath(new URL('./fixtures/read_shard.py', import.meta.url));
const MiB = 1024 * 1024;

interface Shard {
  node: string;
  startLayer: number;
  endLayer: number;
}
interface Transfer {
  id: string;
  state: string;
  stage?: { fromLayer: number; toLayer: number };
  bySource: Record<string, { chunks: number; bytes: number }>;
}

function rangeHash(path: string, begin: number, end: number): string {
  const fd = openSync(path, 'r');
  const buf = Buffer.alloc(end - begin);
  readSync(fd, buf, 0, buf.length, begin);
  closeSync(fd);
  return createHash('sha256').update(buf).digest('hex');
}

/** Bytes the filesystem allocated for a directory's files (a partial copy's files are sparse). */
function allocated(dir: string): number {
  let sum = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) sum += statSync(join(e.parentPath, e.name)).blocks * 512;
  return sum;
}

t.test(
  'a 3-stage pipeline of a model held by one node: each node receives only its stage, each runner its tensors',
  { timeout: 400_000, skip: skipOrFail(why) },
  async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'torus-model-stages-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    await withLab(t, { hosts: 3, lanRate: '400mbit' }, async (lab) => {
      const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet'] });
      await c.converged(120_000, profiled);
      const [h0] = c.nodes as [E2eNode, E2eNode, E2eNode];
      const src = join(c.tmpDir, 'tiny-llama');
      // 6 layers of ~17 MiB: 128 KiB chunks keep every stage's over-fetch under 1 % (0.88 %).
      makeModel({ out: src, bytes: 128 * MiB, layers: 6, shards: 3, seed: 'lab-stages' });
      const add = await c.cli(0, ['artifacts', 'add', src, '--name', 'tiny-llama', '--data-dir', h0.dataDir], 120_000);
      t.equal(add.code, 0, `add: ${add.stderr}`);
      const id = add.stdout.trim();
      const view = await h0.get<{ model: { layers: number }; chunks: number; bytes: number }>(`/v1/artifacts/${id}`);
      t.equal(view.model.layers, 6);
      const manifest = decodeManifest(readFileSync(join(h0.dataDir, 'artifacts', id, 'manifest.json')), id);
      t.equal(manifest.chunkSize, 128 * 1024, 'the chunk size chosen for the model');
      const model = JSON.parse(readFileSync(join(h0.dataDir, 'artifacts', id, 'model.json'), 'utf8')) as ModelRecord;

      const script =
        `f=${out}/$TORUS_NODE_ID-$TORUS_LAYER_START-$TORUS_LAYER_END; ` +
        `python3 ${READER} "$TORUS_MODEL_DIR" > $f.tmp 2>&1; echo "$TORUS_MODEL_DIR" > $f.dir; mv $f.tmp $f.json; exec sleep 300`;
      const res = await h0.fetch('/v1/instances', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          instanceId: 'stages',
          minNodes: 3,
          workload: {
            kind: 'exec',
            id: 'stages-job',
            model: id,
            memoryBytes: 128 * MiB,
            layers: 6,
            command: '/bin/sh',
            args: ['-c', script],
          },
        }),
      });
      t.equal(res.status, 201, res.status === 201 ? 'instance created' : await res.clone().text());
      const placed = (await res.json()) as { nodes: string[]; sharding: string; plan: { shards: Shard[] } };
      t.equal(placed.nodes.length, 3);
      t.equal(placed.sharding, 'pipeline');
      const shards = placed.plan.shards.filter((s) => s.endLayer > s.startLayer);
      t.equal(shards.length, 3, `3 stages: ${JSON.stringify(shards)}`);

      await c.until(
        'every runner read its TORUS_MODEL_DIR',
        async () => shards.every((s) => existsSync(join(out, `${s.node}-${s.startLayer}-${s.endLayer}.json`))),
        240_000,
        500,
      );
      for (const s of shards) {
        const stage = { fromLayer: s.startLayer, toLayer: s.endLayer };
        const node = c.nodes.find((n) => n.id === s.node)!;
        const read = JSON.parse(
          readFileSync(join(out, `${s.node}-${s.startLayer}-${s.endLayer}.json`), 'utf8'),
        ) as Record<string, { sha256: string }>;
        const names = stageTensors(model, stage);
        t.same(
          Object.keys(read).sort(),
          [...names].sort(),
          `${s.node} (layers ${s.startLayer}–${s.endLayer}): exactly its tensors`,
        );
        const wrong = names.filter((n) => {
          const [, file, , , begin, end] = model.tensors.find((x) => x[0] === n)!;
          return read[n]?.sha256 !== rangeHash(join(src, model.files[file]!.path), begin, end);
        });
        t.same(wrong, [], `${s.node}: every tensor's bytes identical to the source`);
        const dir = readFileSync(join(out, `${s.node}-${s.startLayer}-${s.endLayer}.dir`), 'utf8').trim();
        t.equal(dir, join(node.dataDir, 'artifacts', id, 'shards', `layers-${s.startLayer}-${s.endLayer}`));

        // The shard: its tensors' bytes and the loader files, as the chunk set counts them.
        const shardBytes =
          names.reduce((a, n) => {
            const x = model.tensors.find((y) => y[0] === n)!;
            return a + x[5] - x[4];
          }, 0) + statSync(join(src, 'config.json')).size;
        if (node.id === h0.id) {
          t.comment(`${s.node} holds the whole model (it added it)`);
          continue;
        }
        const tr = (await node.get<{ transfers: Transfer[] }>('/v1/artifacts/transfers')).transfers.find(
          (x) => x.id === id,
        )!;
        t.match(tr, { state: 'complete', stage });
        const received = Object.values(tr.bySource).reduce((a, x) => a + x.bytes, 0);
        const want = chunksBytes(manifest, stageChunks(manifest, model, stage));
        t.equal(received, want, `${s.node}: received exactly its stage's chunks, once each`);
        t.ok(
          received <= shardBytes * 1.01,
          `${s.node}: received ${received} bytes for a shard of ${shardBytes} (+${(((received - shardBytes) / shardBytes) * 100).toFixed(2)} %)`,
        );
        t.ok(received < view.bytes * 0.6, `${s.node}: far from the whole model (${view.bytes} bytes)`);
        const onDisk = allocated(join(node.dataDir, 'artifacts', id, 'files'));
        t.ok(
          onDisk <= shardBytes * 1.01 + manifest.chunkSize,
          `${s.node}: its store allocated ${onDisk} bytes for the copy (the shard: ${shardBytes})`,
        );
      }

      // Which layers each node holds: the API and `artifacts ls`.
      const holders = await c.until(
        'the holdings show every stage complete',
        async () => {
          const a = await h0.tryGet<{
            holders: { node: string; stage?: { fromLayer: number; toLayer: number; have: number; chunks: number } }[];
          }>(`/v1/artifacts/${id}`);
          const stageHolders = shards.filter((s) => s.node !== h0.id);
          return (
            a &&
            stageHolders.every((s) =>
              a.holders.some(
                (h) =>
                  h.node === s.node &&
                  h.stage?.fromLayer === s.startLayer &&
                  h.stage.toLayer === s.endLayer &&
                  h.stage.have === h.stage.chunks,
              ),
            ) &&
            a.holders
          );
        },
        30_000,
      );
      t.ok(
        holders.some((h) => h.node === h0.id && !h.stage),
        'the node that added it holds it whole',
      );
      const ls = await c.cli(1, ['artifacts', 'ls'], 30_000);
      for (const s of shards.filter((x) => x.node !== h0.id))
        t.match(
          ls.stdout,
          new RegExp(`${s.node} \\(layers ${s.startLayer}-${s.endLayer}\\)`),
          `ls: ${s.node}'s layers`,
        );
      t.equal((await c.cli(0, ['delete', 'stages'], 30_000)).code, 0);
    });
  },
);
