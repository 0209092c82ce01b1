/** A stage holding (ArtifactHeld.stage) through the strict event decoder, into the state and its snapshots; hostile ones refused. */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import { readModelDir } from '../../../src/artifacts/model/model-reader.js';
import { applyEvents } from '../../../src/actors/topology-keeper/apply.js';
import { decodeSnapshot, encodeSnapshot } from '../../../src/actors/topology-keeper/snapshot.js';
import { emptyState } from '../../../src/actors/topology-keeper/state.js';
import { stateDigest } from '../../../src/actors/topology-keeper/digest.js';
import { decodeClusterEvent, type ClusterEvent } from '../../../src/protocols/events.js';
import type { ModelRecord } from '../../../src/protocols/model-record.js';
import { instanceArtifacts } from '../../../src/artifacts/instance-progress.js';

const ART = 'cd'.repeat(32);

const joined = (id: string): ClusterEvent => ({
  type: 'NodeJoined',
  nodeId: id,
  name: id,
  incarnation: 1,
  apiPort: 1,
  apiAddresses: [],
  version: 't',
});
type Stage = { fromLayer: number; toLayer: number; have: number; chunks: number };
const held = (nodeId: string, have: number, stage?: Stage, model?: ModelRecord): ClusterEvent => ({
  type: 'ArtifactHeld',
  nodeId,
  artifactId: ART,
  name: 'm',
  bytes: 1000,
  chunks: 10,
  have,
  ...(model ? { model } : {}),
  ...(stage ? { stage } : {}),
});
const apply = (events: ClusterEvent[]) =>
  applyEvents(
    emptyState,
    events.map((event, i) => ({ index: i + 1, term: 1, event })),
  );

t.test('a stage holding reaches the state, changes with its progress and survives a snapshot', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'torus-stage-state-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  makeModel({ out: dir, bytes: 2 ** 20, layers: 4, shards: 1 });
  const model = (await readModelDir(dir))!.model!;
  const stage = { fromLayer: 2, toLayer: 4, have: 1, chunks: 4 };
  const event = decodeClusterEvent(JSON.parse(JSON.stringify(held('b', 1, stage))));
  t.same(event, held('b', 1, stage), 'the strict decoder keeps it');
  const s = apply([
    joined('a'),
    joined('b'),
    held('a', 10, undefined, model),
    held('b', 1, stage),
    held('b', 4, { ...stage, have: 4 }),
  ]);
  t.same(s.artifacts![ART]!.holders.b, { have: 4, stage: { ...stage, have: 4 } }, 'the latest report');
  t.notOk('stage' in s.artifacts![ART]!.holders.a!, 'a whole holding has none');
  t.same(decodeSnapshot(JSON.parse(JSON.stringify(encodeSnapshot(s)))).state, s, 'a snapshot round-trips');
  const past = apply([
    joined('a'),
    joined('b'),
    held('a', 10, undefined, model),
    held('b', 1, { ...stage, toLayer: 5 }),
  ]);
  t.notOk(past.artifacts![ART]!.holders.b, 'a stage past the recorded model is ignored');
});

t.test('a hostile stage is refused by the event decoder and the snapshot decoder', async (t) => {
  const bad: [string, unknown, number][] = [
    ['an empty layer range', { fromLayer: 3, toLayer: 3, have: 0, chunks: 1 }, 5],
    ['layers reversed', { fromLayer: 3, toLayer: 1, have: 0, chunks: 1 }, 5],
    ['more chunks than the artifact', { fromLayer: 0, toLayer: 1, have: 0, chunks: 11 }, 5],
    ['more held than the stage', { fromLayer: 0, toLayer: 1, have: 3, chunks: 2 }, 5],
    ['more held than the holding', { fromLayer: 0, toLayer: 1, have: 3, chunks: 4 }, 2],
    ['no chunks', { fromLayer: 0, toLayer: 1, have: 0, chunks: 0 }, 5],
    ['a negative layer', { fromLayer: -1, toLayer: 1, have: 0, chunks: 1 }, 5],
    ['a layer past any model', { fromLayer: 0, toLayer: 2_000_000, have: 0, chunks: 1 }, 5],
    ['an unknown field', { fromLayer: 0, toLayer: 1, have: 0, chunks: 1, extra: 1 }, 5],
    ['a fraction', { fromLayer: 0.5, toLayer: 1, have: 0, chunks: 1 }, 5],
  ];
  for (const [why, stage, have] of bad) {
    t.throws(
      () => decodeClusterEvent(JSON.parse(JSON.stringify({ ...held('a', have), stage }))),
      { code: 'TORUS_PROTOCOL_INVALID' },
      why,
    );
    const snap = JSON.parse(JSON.stringify(encodeSnapshot(apply([joined('a'), held('a', have)]))));
    snap.state.artifacts[ART].holders.a.stage = stage;
    snap.digest = stateDigest(snap.state); // so only the stage's own check can refuse it
    t.throws(() => decodeSnapshot(snap), { code: 'TORUS_PROTOCOL_INVALID' }, `snapshot: ${why}`);
  }
});

t.test('the instance view shows per node its stage of the model and how far it has come', async (t) => {
  const s = apply([
    joined('a'),
    joined('b'),
    joined('c'),
    held('a', 10),
    held('b', 3, { fromLayer: 2, toLayer: 4, have: 3, chunks: 4 }),
  ]);
  const view = instanceArtifacts(s, [ART], ['a', 'b', 'c'], {
    id: ART,
    stages: { a: [0, 2], b: [2, 4], c: [4, 6] },
  });
  t.same(view[0]!.nodes, [
    { node: 'a', haveBytes: 1000, complete: true, layers: [0, 2] },
    { node: 'b', haveBytes: 300, complete: false, layers: [2, 4], bytes: 400 },
    { node: 'c', haveBytes: 0, complete: false, layers: [4, 6] },
  ]);
  const done = apply([joined('b'), held('b', 4, { fromLayer: 2, toLayer: 4, have: 4, chunks: 4 })]);
  t.match(instanceArtifacts(done, [ART], ['b'], { id: ART, stages: { b: [2, 4] } })[0]!.nodes[0], {
    complete: true,
    haveBytes: 400,
    bytes: 400,
  });
  const other = apply([joined('b'), held('b', 4, { fromLayer: 0, toLayer: 2, have: 4, chunks: 4 })]);
  t.match(
    instanceArtifacts(other, [ART], ['b'], { id: ART, stages: { b: [2, 4] } })[0]!.nodes[0],
    { complete: false, haveBytes: 0 },
    'other layers held are not this stage',
  );
});
