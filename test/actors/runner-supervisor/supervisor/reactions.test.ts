import t from 'tap';
import { createActor } from 'xstate';
import {
  reactToEvent,
  reactToState,
  toRunnerInstance,
} from '../../../../src/actors/runner-supervisor/supervisor/reactions.js';
import { runnerSupervisorMachine } from '../../../../src/actors/runner-supervisor/supervisor/machine.js';
import { decodeSupervisorMessage } from '../../../../src/actors/runner-supervisor/supervisor/messages.js';
import { decodeStateView } from '../../../../src/actors/runner-supervisor/supervisor/state-view.js';
import type { InstancePlan, WorkloadSpec } from '../../../../src/protocols/events.js';
import { ValidationError } from '../../../../src/protocols/errors.js';

const plan: InstancePlan = {
  id: 'i1',
  backend: 'ring',
  sharding: 'pipeline',
  nodes: ['a', 'b'],
  port: 5000,
  shards: [
    { node: 'a', rank: 0, worldSize: 2, startLayer: 0, endLayer: 6 },
    { node: 'b', rank: 1, worldSize: 2, startLayer: 6, endLayer: 12 },
  ],
};
const workload: WorkloadSpec = {
  kind: 'exec',
  id: 'w',
  memoryBytes: 1,
  layers: 12,
  command: 'python',
  args: ['train.py'],
  env: { A: '1' },
};

t.test('events → effects for this node', async (t) => {
  let r = reactToEvent('a', {}, { type: 'InstanceCreated', instance: plan, workload });
  t.same(r.effects, [{ type: 'start', instance: toRunnerInstance(plan, workload) }]);
  t.same(toRunnerInstance(plan, workload).workload, { kind: 'exec', command: ['python', 'train.py'], env: { A: '1' } });
  t.same(reactToEvent('c', {}, { type: 'InstanceCreated', instance: plan, workload }).effects, [], 'not on this node');
  const known = r.known;
  t.same(
    reactToEvent('a', known, {
      type: 'RunnerStatusChanged',
      instanceId: 'i1',
      nodeId: 'b',
      status: 'Failed',
      reason: 'x',
    }).effects,
    [{ type: 'peer', instanceId: 'i1', nodeId: 'b', status: { state: 'Failed', reason: 'x', diagnostics: [] } }],
  );
  t.same(
    reactToEvent('a', known, { type: 'RunnerStatusChanged', instanceId: 'i1', nodeId: 'a', status: 'Ready' }).effects,
    [],
    'own echo ignored',
  );
  t.same(
    reactToEvent('c', known, { type: 'RunnerStatusChanged', instanceId: 'i1', nodeId: 'b', status: 'Ready' }).effects,
    [],
    'a node that runs no rank of the instance does not act on (or keep) its statuses',
  );
  t.same(reactToEvent('a', known, { type: 'TaskCreated', taskId: 't1', instanceId: 'i1', kind: 'barrier' }).effects, [
    { type: 'task', taskId: 't1', instanceId: 'i1', kind: 'barrier' },
  ]);
  t.same(reactToEvent('a', known, { type: 'TaskStatusChanged', taskId: 't1', status: 'cancelled' }).effects, [
    { type: 'cancel', taskId: 't1' },
  ]);
  const moved: InstancePlan = {
    ...plan,
    nodes: ['b', 'c'],
    shards: [
      { ...plan.shards[0]!, node: 'b' },
      { ...plan.shards[1]!, node: 'c' },
    ],
  };
  t.match(reactToEvent('a', known, { type: 'InstanceReplaced', instance: moved, reason: 'node a gone' }).effects, [
    { type: 'stop', instanceId: 'i1' },
  ]);
  t.match(reactToEvent('b', known, { type: 'InstanceReplaced', instance: moved, reason: 'x' }).effects, [
    { type: 'replace' },
  ]);
  r = reactToEvent('a', known, { type: 'InstanceDeleted', instanceId: 'i1', reason: 'user' });
  t.match(r.effects, [{ type: 'stop', instanceId: 'i1', reason: /deleted: user/ }]);
  t.same(r.known, {});
  t.match(reactToEvent('a', known, { type: 'InstanceFailed', instanceId: 'i1', reason: 'gave up' }).effects, [
    { type: 'stop' },
  ]);
});

t.test('catch-up from a state', async (t) => {
  const r = reactToState(
    'b',
    {},
    {
      instances: { i1: { plan, workload, status: 'active', runners: { a: { status: 'Ready' } } } },
      tasks: {
        t1: { id: 't1', instanceId: 'i1', kind: 'exec', status: 'pending' },
        t2: { id: 't2', instanceId: 'i1', kind: 'exec', status: 'complete' },
      },
    },
  );
  t.same(
    r.effects.map((e) => e.type),
    ['start', 'peer', 'task'],
  );
});

t.test('machine emits effects as data; messages are strict', async (t) => {
  const actor = createActor(runnerSupervisorMachine, { input: { nodeId: 'a' } }).start();
  const seen: unknown[] = [];
  actor.on('runners.effects', (e) => seen.push(...e.effects));
  actor.send(
    decodeSupervisorMessage({
      type: 'events',
      entries: [{ index: 3, term: 1, event: { type: 'InstanceCreated', instance: plan, workload } }],
    }),
  );
  t.equal(seen.length, 1);
  t.equal(actor.getSnapshot().context.lastIndex, 3);
  actor.send({ type: 'stop' });
  actor.send({ type: 'cluster.events', events: [{ type: 'InstanceDeleted', instanceId: 'i1', reason: 'x' }] });
  t.equal(seen.length, 1, 'ignores the log once stopping');
  for (const bad of [
    null,
    {},
    { type: 'nope' },
    { type: 'events', entries: 'x' },
    { type: 'events', entries: [{ index: 0, term: 1, event: {} }] },
    { type: 'state-replaced', extra: 1 },
    // Variants no sender uses: the node hands the supervisor the applied log by index, and it reads the state itself.
    {
      type: 'event',
      indexed: { index: 3, term: 1, event: { type: 'InstanceDeleted', instanceId: 'i1', reason: 'x' } },
    },
    { type: 'cluster.event', event: { type: 'InstanceDeleted', instanceId: 'i1', reason: 'x' } },
    { type: 'state', state: { instances: {}, tasks: {} } },
    { type: 'stop' },
  ]) {
    t.throws(() => decodeSupervisorMessage(bad), ValidationError, JSON.stringify(bad));
  }
});

t.test('catch-up stops what is gone or re-placed', async (t) => {
  const known = reactToEvent('a', {}, { type: 'InstanceCreated', instance: plan, workload }).known;
  t.match(reactToState('a', known, { instances: {}, tasks: {} }).effects, [{ type: 'stop', instanceId: 'i1' }]);
  const r = reactToState('a', known, {
    instances: { i1: { plan: { ...plan, port: 6000 }, workload, status: 'active', runners: {} } },
    tasks: {},
  });
  t.same(
    r.effects.map((e) => e.type),
    ['stop', 'start'],
    're-placed while behind: restart on the new plan',
  );
  t.same(
    reactToState('a', known, {
      instances: { i1: { plan, workload, status: 'active', runners: {} } },
      tasks: {},
    }).effects.map((e) => e.type),
    ['start'],
    'unchanged: start is idempotent',
  );
});

t.test('an older state never stops runners; key order does not count as a re-placement', async (t) => {
  const known = reactToEvent('a', {}, { type: 'InstanceCreated', instance: plan, workload }).known;
  t.same(reactToState('a', known, { instances: {}, tasks: {} }, false).effects, [], 'older state: nothing stopped');
  const reordered = JSON.parse(
    JSON.stringify({
      port: plan.port,
      shards: plan.shards,
      nodes: plan.nodes,
      sharding: plan.sharding,
      backend: plan.backend,
      id: plan.id,
    }),
  );
  t.same(
    reactToState('a', known, {
      instances: { i1: { plan: reordered, workload, status: 'active', runners: {} } },
      tasks: {},
    }).effects.map((e) => e.type),
    ['start'],
  );
});

t.test(
  'machine follows the committed stream by index: duplicates skipped, a gap or a replaced state → resync',
  async (t) => {
    const actor = createActor(runnerSupervisorMachine, { input: { nodeId: 'a' } }).start();
    const effects: unknown[] = [];
    let resyncs = 0;
    actor.on('runners.effects', (e) => effects.push(...e.effects));
    actor.on('runners.resync', () => resyncs++);
    const created = { type: 'InstanceCreated' as const, instance: plan, workload };
    const deleted = { type: 'InstanceDeleted' as const, instanceId: 'i1', reason: 'x' };
    actor.send({ type: 'cluster.state', state: { instances: {}, tasks: {} }, lastIndex: 4, authoritative: true });
    t.equal(actor.getSnapshot().context.lastIndex, 4);
    actor.send({ type: 'cluster.events', events: [created], indices: [4] });
    t.same(effects, [], 'an entry the state read already reflects is skipped');
    actor.send({ type: 'cluster.events', events: [created], indices: [5] });
    t.equal(effects.length, 1, 'the next index is applied');
    actor.send({ type: 'cluster.events', events: [created], indices: [5] });
    t.equal(effects.length, 1, 'a re-sent entry is applied once');
    actor.send({ type: 'cluster.events', events: [deleted], indices: [7] });
    t.equal(resyncs, 1, 'index 6 missing: read the state again');
    t.equal(effects.length, 1, 'nothing past the gap is acted on');
    t.equal(actor.getSnapshot().context.lastIndex, 5);
    actor.send({ type: 'cluster.state', state: { instances: {}, tasks: {} }, lastIndex: 7, authoritative: true });
    t.match(effects.at(-1), { type: 'stop', instanceId: 'i1' }, 'the state read catches up');
    t.equal(actor.getSnapshot().context.lastIndex, 7);
    actor.send({ type: 'cluster.replaced' });
    t.equal(resyncs, 2, 'a replaced state is read again');
    actor.stop();
  },
);

t.test("the keeper's state answer decodes to the view the reactions read, nothing more", async (t) => {
  const answer = {
    instances: {
      i1: { plan, workload, status: 'active', generation: 3, runners: { a: { status: 'Ready', since: 1 } } },
    },
    tasks: { t1: { id: 't1', instanceId: 'i1', kind: 'exec', status: 'pending', createdAt: 9 } },
    nodes: {},
  };
  const view = decodeStateView(answer);
  t.same(view.instances.i1?.runners, { a: { status: 'Ready' } }, "the keeper's other fields are not copied");
  t.same(view.tasks, { t1: { id: 't1', instanceId: 'i1', kind: 'exec', status: 'pending' } });
  t.same(
    reactToState('a', {}, view).effects.map((e) => e.type),
    ['start', 'task'],
  );
  t.throws(() => decodeStateView({ instances: 1, tasks: {} }), ValidationError);
});
