// The keeper's read answers: pure functions of the one applied state (queries.ts), and the keeper's thread run
// without the agreement (an embedder's keeper alone), which answers on the empty state.
import t from 'tap';
import { pack, unpack } from 'msgpackr';
import { Runtime } from '../../../src/runtime/runtime.js';
import { siblingModule } from '../../../src/runtime/module-url.js';
import { applyEvents } from '../../../src/actors/topology-keeper/apply.js';
import { stateDigest } from '../../../src/actors/topology-keeper/digest.js';
import { emptyState, type ClusterState } from '../../../src/actors/topology-keeper/state.js';
import {
  instanceAnswer,
  instancesAnswer,
  placementStateAnswer,
  replicaView,
  snapshotAnswer,
  stateAnswer,
  toReplaceAnswer,
  topologyAnswer,
} from '../../../src/actors/topology-keeper/queries.js';
import { decodeSnapshot } from '../../../src/actors/topology-keeper/snapshot.js';
import { everyEvent, indexed } from '../../fixtures/topology/events.js';

const keeperThread = siblingModule(import.meta.url, '../../../src/actors/cluster/worker');
const log = indexed(everyEvent.slice(0, 15));

t.test('queries answer from the applied state', async (t) => {
  const state: ClusterState = applyEvents(emptyState, log);
  const expected = stateDigest(state);
  t.match(stateAnswer(state), { digest: expected, lastIndex: 15 });
  const crossed = unpack(pack(stateAnswer(state))) as { state: ClusterState };
  t.equal(stateDigest(crossed.state), expected, 'the state survives the msgpack boundary byte-identical');
  t.match(topologyAnswer(state), {
    nodes: [{ id: 'a' }, { id: 'b' }],
    links: [
      { source: 'a', sink: 'b' },
      { source: 'b', sink: 'a' },
    ],
  });
  t.match(instanceAnswer(state, 'inst-1'), { id: 'inst-1', generation: 2, plan: { nodes: ['b', 'a'] } });
  t.throws(() => instanceAnswer(state, 'nope'), { code: 'TORUS_INSTANCE_UNKNOWN' });
  t.match(placementStateAnswer(state), { nodes: [{ id: 'a', memory: { ramAvailable: 1000 } }, { id: 'b' }] });
  t.match(instancesAnswer(state), { instances: [{ id: 'inst-1' }], lastIndex: 15 });
  t.match(toReplaceAnswer(state), { instances: [] });
  t.match(replicaView(state), { lastIndex: 15, digest: expected, counts: { nodes: 2, links: 2, instances: 1 } });
  const snap = snapshotAnswer(state);
  t.equal(snap.digest, expected);
  t.equal(stateDigest(decodeSnapshot(snap).state), expected, 'a new node installs the same state from it');
});

t.test('the keeper thread without the agreement: the empty state, strict requests', async (t) => {
  const runtime = new Runtime();
  t.teardown(() => runtime.kill());
  await runtime.supervise({
    name: 'topology-keeper',
    module: keeperThread,
    options: { nodeId: 'a', agreement: false },
  });
  t.same(runtime.actors(), ['topology-keeper'], 'no cluster address without the agreement');
  const answer = await runtime.request<{ digest: string; lastIndex: number }>('topology-keeper', { type: 'state' });
  t.equal(answer.lastIndex, 0);
  t.equal(answer.digest, stateDigest(emptyState));
  t.match(await runtime.request('topology-keeper', { type: 'topology' }), { nodes: [], links: [] });
  await t.rejects(runtime.request('topology-keeper', { type: 'instance', id: 'nope' }), {
    code: 'TORUS_INSTANCE_UNKNOWN',
  });
  await t.rejects(runtime.request('topology-keeper', { type: 'instance' }), { code: 'TORUS_API_VALIDATION' });
  await t.rejects(runtime.request('topology-keeper', { type: 'role' }), { code: 'TORUS_ACTOR_UNKNOWN' });
  for (const end = Date.now() + 5000; !runtime.snapshot('topology-keeper') && Date.now() < end; )
    await new Promise((r) => setTimeout(r, 20));
  t.match(runtime.snapshot('topology-keeper'), { value: 'discovering', lastIndex: 0, counts: { nodes: 0 } });
});
