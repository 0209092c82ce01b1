/**
 * Per-stage transfers between in-process nodes (real services, peer routes over loopback HTTP, one shared state):
 * each node of a 3-stage pipeline receives exactly its stage's chunks through the runner gate and gets a
 * TORUS_MODEL_DIR an independent reader finds its tensors in, bytes identical to the source; the holdings say
 * which layers each node holds; a stage holder serves its chunks when the node that added the model is gone (the
 * heal path), and a restarted stage holder stays a stage holding.
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import { RunnerArtifactGate, type RunnerArtifactsAnswer } from '../../../src/artifacts/runner-gate.js';
import { stageChunks, chunksBytes } from '../../../src/artifacts/model/stage-chunks.js';
import { stageTensors } from '../../../src/artifacts/model/shard-writer.js';
import { ArtifactService } from '../../../src/artifacts/service.js';
import { createLogger } from '../../../src/runtime/log.js';
import type { ModelRecord } from '../../../src/protocols/model-record.js';
import { KEY, startNodes, until, type TestNode } from '../fixtures.js';

const READER = fileURLToPath(new URL('./fixtures/read_shard.py', import.meta.url));
const STAGES = [
  { fromLayer: 0, toLayer: 2 },
  { fromLayer: 2, toLayer: 4 },
  { fromLayer: 4, toLayer: 6 },
];

function sourceHash(dir: string, model: ModelRecord, name: string): string {
  const [, file, , , begin, end] = model.tensors.find((x) => x[0] === name)!;
  const fd = openSync(join(dir, model.files[file]!.path), 'r');
  const buf = Buffer.alloc(end - begin);
  readSync(fd, buf, 0, buf.length, begin);
  closeSync(fd);
  return createHash('sha256').update(buf).digest('hex');
}

const sum = (by: Record<string, { chunks: number; bytes: number }>, k: 'chunks' | 'bytes'): number =>
  Object.values(by).reduce((a, x) => a + x[k], 0);

const held = (n: TestNode, id: string): number[] => {
  const bits = n.service.haveSet(id)!;
  return [...bits.keys()].filter((i) => bits[i]);
};

async function ready(gate: RunnerArtifactGate, request: Parameters<RunnerArtifactGate['prepare']>[0]) {
  return until(`${request.instanceId} ready`, async () => {
    const a: RunnerArtifactsAnswer = await gate.prepare(request);
    if (a.state === 'failed') throw new Error(a.reason);
    return a.state === 'ready' && a.env;
  });
}

t.test('each stage receives only its chunks and its runner a shard directory of exactly its tensors', async (t) => {
  const src = mkdtempSync(join(tmpdir(), 'torus-stage-src-'));
  t.teardown(() => rmSync(src, { recursive: true, force: true }));
  makeModel({ out: join(src, 'm'), bytes: 6 * 2 ** 20, layers: 6, shards: 3, seed: 'stages' });
  const { shared, nodes } = await startNodes(t, 5);
  const [n0, n1, n2, n3, n4] = nodes as [TestNode, TestNode, TestNode, TestNode, TestNode];
  const added = await n0.service.store.add(join(src, 'm'), { name: 'tiny' });
  t.ok(added.model, 'added as a model');
  await n0.service.announce(added.id);
  const id = added.id;
  const model = shared.state.artifacts![id]!.model!;
  const manifest = n0.service.store.manifest(id)!.manifest;
  const order = ['n1', 'n2', 'n3'];

  for (const [i, n] of [n1, n2, n3].entries()) {
    const stage = STAGES[i]!;
    const gate = new RunnerArtifactGate(n.service, n.id);
    const env = await ready(gate, { instanceId: 'job', artifacts: [], order, model: { id, stage } });
    const want = stageChunks(manifest, model, stage);
    t.same(held(n, id), want, `${n.id}: exactly the chunks of layers ${stage.fromLayer}–${stage.toLayer}`);
    const tr = n.service.transfer(id)!;
    t.match(tr, { state: 'complete', stage, chunks: want.length, have: want.length });
    // From n0, and the chunks shared with a stage already here (config, a boundary chunk) maybe from its holder.
    t.equal(sum(tr.bySource, 'chunks'), want.length, `${n.id}: each chunk received once`);
    t.equal(sum(tr.bySource, 'bytes'), chunksBytes(manifest, want), `${n.id}: bytes received are the stage's chunks`);
    t.ok(sum(tr.bySource, 'bytes') < added.bytes / 2, `${n.id}: well under the whole model`);
    t.notOk(n.service.store.info(id)!.complete, 'the copy stays partial');

    const dir = env.TORUS_MODEL_DIR!;
    t.equal(dir, join(n.service.store.paths(id).dir, 'shards', `layers-${stage.fromLayer}-${stage.toLayer}`));
    const read = JSON.parse(execFileSync('python3', [READER, dir], { encoding: 'utf8' })) as Record<
      string,
      { dtype: string; shape: number[]; sha256: string }
    >;
    const names = stageTensors(model, stage);
    t.same(Object.keys(read).sort(), [...names].sort(), `${n.id}: the shard holds exactly its tensors`);
    for (const name of names)
      t.equal(read[name]!.sha256, sourceHash(join(src, 'm'), model, name), `${n.id}: ${name} bytes identical`);
    const again = await gate.prepare({ instanceId: 'job-2', artifacts: [], order, model: { id, stage } });
    t.same(again, { state: 'ready', env: { TORUS_MODEL_DIR: dir } }, 'a later runner reuses the built directory');
  }

  await until('holdings show each stage complete', () =>
    [n1, n2, n3].every((n, i) => {
      const h = shared.state.artifacts![id]!.holders[n.id];
      return h?.stage?.fromLayer === STAGES[i]!.fromLayer && h.stage.have === h.stage.chunks;
    }),
  );
  const h2 = shared.state.artifacts![id]!.holders.n2!;
  t.same(h2.stage, {
    fromLayer: 2,
    toLayer: 4,
    have: stageChunks(manifest, model, STAGES[1]!).length,
    chunks: stageChunks(manifest, model, STAGES[1]!).length,
  });
  t.equal(h2.have, h2.stage!.chunks, 'the holding has exactly the stage');

  // The node that added the model leaves: a node taking over stage 2 gets it from the stage holder n2.
  shared.apply({ type: 'NodeGone', nodeId: 'n0', reason: 'test' });
  await n0.service.close();
  n0.server.closeAllConnections();
  n0.server.close();
  const gate4 = new RunnerArtifactGate(n4.service, n4.id);
  const env4 = await ready(gate4, {
    instanceId: 'job-healed',
    artifacts: [],
    order: ['n1', 'n4', 'n3'],
    model: { id, stage: STAGES[1]! },
  });
  const want2 = stageChunks(manifest, model, STAGES[1]!);
  t.same(held(n4, id), want2, 'the replacement holds exactly stage 2');
  const by4 = n4.service.transfer(id)!.bySource;
  t.ok(by4.n2!.chunks > want2.length / 2, `most from the stage holder n2 (${JSON.stringify(by4)})`);
  t.notOk(by4.n0, 'nothing from the node that left');
  t.equal(sum(by4, 'chunks'), want2.length, 'each chunk once');
  const read4 = JSON.parse(execFileSync('python3', [READER, env4.TORUS_MODEL_DIR!], { encoding: 'utf8' }));
  t.same(Object.keys(read4).sort(), [...stageTensors(model, STAGES[1]!)].sort());

  // A stage holder restarted: a holding, not an interrupted transfer; it does not fetch the rest.
  await n1.service.close();
  const again = new ArtifactService({
    nodeId: 'n1',
    nodeName: 'n1',
    dataDir: n1.dir,
    dataKey: KEY,
    log: createLogger({ component: 'artifacts-n1-again' }),
    syncIntervalMs: 200,
    cluster: {
      state: async () => shared.state,
      propose: async (e) => shared.apply(e),
      until: async (done, _ms, onTimeout) => {
        if (!done(shared.state)) throw onTimeout();
      },
    },
  });
  t.teardown(() => again.close());
  again.start();
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(again.transfer(id), undefined, 'no transfer resumed');
  t.equal(
    again.localHoldings().find((h) => h.id === id)?.stage?.have,
    stageChunks(manifest, model, STAGES[0]!).length,
    'still a complete stage holding',
  );
});
