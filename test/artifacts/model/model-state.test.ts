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
import { MAX_MODEL_RECORD_BYTES, type ModelRecord } from '../../../src/protocols/model-record.js';

const ART = 'ab'.repeat(32);

async function record(t: { teardown(fn: () => void): void }): Promise<ModelRecord> {
  const dir = mkdtempSync(join(tmpdir(), 'torus-model-state-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  makeModel({ out: dir, bytes: 2 ** 20, layers: 2, shards: 2 });
  return (await readModelDir(dir))!.model!;
}

const joined = (id: string): ClusterEvent => ({
  type: 'NodeJoined',
  nodeId: id,
  name: id,
  incarnation: 1,
  apiPort: 1,
  apiAddresses: [],
  version: 't',
});
const held = (nodeId: string, model?: ModelRecord): ClusterEvent => ({
  type: 'ArtifactHeld',
  nodeId,
  artifactId: ART,
  name: 'm',
  bytes: 100,
  chunks: 2,
  have: 2,
  ...(model ? { model } : {}),
});
const apply = (events: ClusterEvent[]) =>
  applyEvents(
    emptyState,
    events.map((event, i) => ({ index: i + 1, term: 1, event })),
  );

t.test('ArtifactHeld carries the model record into the state; the first record stays; snapshots keep it', async (t) => {
  const model = await record(t);
  const event = decodeClusterEvent(JSON.parse(JSON.stringify(held('a', model))));
  t.same(event, held('a', model), 'the record survives the strict decoder');
  const other = { ...model, architecture: 'Other' };
  const s = apply([joined('a'), joined('b'), held('a'), held('b', model), held('a', other)]);
  t.same(s.artifacts![ART]!.model, model, 'a holding without a record adds one later; a second record is ignored');
  t.same(decodeSnapshot(JSON.parse(JSON.stringify(encodeSnapshot(s)))).state, s, 'a snapshot round-trips');
  const plain = apply([joined('a'), held('a')]);
  t.notOk('model' in plain.artifacts![ART]!, 'other artifacts stay as they are');
  const gone = applyEvents(s, [
    { index: s.lastIndex + 1, term: 1, event: { type: 'ArtifactDropped', nodeId: 'a', artifactId: ART, reason: 'x' } },
    { index: s.lastIndex + 2, term: 1, event: { type: 'ArtifactDropped', nodeId: 'b', artifactId: ART, reason: 'x' } },
  ]);
  t.equal(gone.artifacts, undefined, 'the record goes with the last holder');
});

t.test('a hostile record is refused by the decoder, and by the snapshot decoder', async (t) => {
  const model = await record(t);
  const [name, file, dtype, shape, begin, end, layer] = model.tensors[0]!;
  const bad: [string, unknown][] = [
    ['a file index out of range', { ...model, tensors: [[name, 9, dtype, shape, begin, end, layer]] }],
    [
      'a range past the file',
      { ...model, tensors: [[name, file, dtype, shape, begin, model.files[file]!.bytes + 1, layer]] },
    ],
    ['a range inside the header', { ...model, tensors: [[name, file, dtype, shape, 0, end, layer]] }],
    ['a layer past the count', { ...model, tensors: [[name, file, dtype, shape, begin, end, 2]] }],
    ['an unknown layer word', { ...model, tensors: [[name, file, dtype, shape, begin, end, 'middle']] }],
    ['a short tuple', { ...model, tensors: [[name, file, dtype, shape, begin, end]] }],
    ['an unknown field', { ...model, extra: 1 }],
    [
      'over the byte bound',
      {
        ...model,
        tensors: Array.from({ length: 3000 }, (_, i) => [
          `${'x'.repeat(400)}${i}`,
          file,
          dtype,
          shape,
          begin,
          end,
          'all',
        ]),
      },
    ],
  ];
  for (const [why, m] of bad) {
    t.throws(
      () => decodeClusterEvent(JSON.parse(JSON.stringify({ ...held('a'), model: m }))),
      { code: 'TORUS_PROTOCOL_INVALID' },
      why,
    );
    const snap = JSON.parse(JSON.stringify(encodeSnapshot(apply([joined('a'), held('a', model)]))));
    snap.state.artifacts[ART].model = m;
    snap.digest = stateDigest(snap.state); // so only the record's own check can refuse it
    t.throws(() => decodeSnapshot(snap), { code: 'TORUS_PROTOCOL_INVALID' }, `snapshot: ${why}`);
  }
  t.ok(Buffer.byteLength(JSON.stringify(bad.at(-1)![1])) > MAX_MODEL_RECORD_BYTES);
});
