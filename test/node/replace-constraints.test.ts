// Re-placement honours the constraints an instance was placed under: the real placement-planner actor plans on
// a cluster state built from events; nodes leave; ReplaceInstance must keep requiredNodes and minNodes.
import t from 'tap';
import { applyEvents } from '../../src/actors/topology-keeper/apply.js';
import { emptyState, type ClusterState } from '../../src/actors/topology-keeper/state.js';
import { CommandHandler } from '../../src/actors/placement-planner/leader/command-handler.js';
import type { ClusterEvent, WorkloadSpec } from '../../src/protocols/events.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { siblingModule } from '../../src/runtime/module-url.js';
import { indexed, joined, linkUp, measured, profile } from '../fixtures/topology/events.js';

const NODES = ['a', 'b', 'c', 'd'];
const ip = (n: string): string => `10.77.0.${NODES.indexOf(n) + 1}`;
const workload: WorkloadSpec = { kind: 'exec', id: 'job', memoryBytes: 100, layers: 8, command: '/bin/true', args: [] };

let index = 0;
function apply(state: ClusterState, events: readonly ClusterEvent[]): ClusterState {
  const out = applyEvents(state, indexed(events, index + 1));
  index += events.length;
  return out;
}

function cluster(): ClusterState {
  const events: ClusterEvent[] = [];
  // Every node runs exec workloads (a node that does not is left out of plans; runner-eligibility tests).
  for (const n of NODES)
    events.push(joined(n), { ...profile(n, ip(n)), runners: { allowExec: true, maxRunners: 8 } } as ClusterEvent);
  for (const s of NODES) for (const k of NODES) if (s !== k) events.push(linkUp(s, k, ip(k)));
  index = 0;
  return apply(emptyState, events);
}

t.test('re-placement keeps requiredNodes and minNodes', async (t) => {
  const runtime = new Runtime();
  t.teardown(() => runtime.shutdown());
  await runtime.supervise({
    name: 'placement-planner',
    module: siblingModule(import.meta.url, '../../src/actors/placement-planner/worker'),
    options: {},
  });
  const handler = new CommandHandler(runtime);
  let state = cluster();

  const placed = await handler.handle(
    { type: 'PlaceInstance', workload, minNodes: 3, requiredNodes: ['a'], instanceId: 'job-1' },
    state,
  );
  const created = placed.events[0] as Extract<ClusterEvent, { type: 'InstanceCreated' }>;
  t.equal(created.type, 'InstanceCreated');
  t.equal(created.minNodes, 3, 'the event carries minNodes');
  t.same(created.requiredNodes, ['a'], 'the event carries requiredNodes');
  t.ok(created.instance.nodes.includes('a'));
  state = apply(state, placed.events);
  t.equal(state.instances['job-1']?.minNodes, 3, 'the state keeps them');

  // A non-required node leaves: re-placed, still with a, still at least 3 nodes.
  const leaving = created.instance.nodes.find((n) => n !== 'a')!;
  state = apply(state, [{ type: 'NodeGone', nodeId: leaving, reason: 'test' }]);
  const again = await handler.handle({ type: 'ReplaceInstance', instanceId: 'job-1' }, state);
  const replaced = again.events[0] as Extract<ClusterEvent, { type: 'InstanceReplaced' }>;
  t.equal(replaced.type, 'InstanceReplaced');
  t.ok(replaced.instance.nodes.includes('a'), `re-placed with the required node: ${replaced.instance.nodes.join(',')}`);
  t.ok(replaced.instance.nodes.length >= 3, 'at least minNodes');
  t.notOk(replaced.instance.nodes.includes(leaving));
  state = apply(state, again.events);

  // Two nodes remain after another leaves: minNodes 3 cannot hold, so the instance fails rather than shrink.
  const second = replaced.instance.nodes.find((n) => n !== 'a')!;
  state = apply(state, [{ type: 'NodeGone', nodeId: second, reason: 'test' }]);
  const shrink = await handler.handle({ type: 'ReplaceInstance', instanceId: 'job-1' }, state);
  t.equal(shrink.events[0]?.type, 'InstanceFailed', 'no re-placement below minNodes');

  // The required node itself leaving also fails it (a fresh instance without minNodes shows the rule alone).
  let s2 = cluster();
  const only = await handler.handle({ type: 'PlaceInstance', workload, requiredNodes: ['b'], instanceId: 'job-2' }, s2);
  s2 = apply(s2, only.events);
  s2 = apply(s2, [{ type: 'NodeGone', nodeId: 'b', reason: 'test' }]);
  const noB = await handler.handle({ type: 'ReplaceInstance', instanceId: 'job-2' }, s2);
  t.equal(noB.events[0]?.type, 'InstanceFailed', 'never re-placed without a required node');
  t.match((noB.events[0] as { reason: string }).reason, /b/);
});

t.test('re-placement keeps the objective: a throughput pipeline is re-planned for throughput', async (t) => {
  const runtime = new Runtime();
  t.teardown(() => runtime.shutdown());
  await runtime.supervise({
    name: 'placement-planner',
    module: siblingModule(import.meta.url, '../../src/actors/placement-planner/worker'),
    options: {},
  });
  const handler = new CommandHandler(runtime);
  // Four equal machines, each able to hold the whole model, on 1 Gbit/s Ethernet: for step time one node is
  // best (no hops); for pipelined tokens/s every stage added runs another step at once.
  const GB = 2 ** 30;
  const events: ClusterEvent[] = [];
  for (const n of NODES)
    events.push(joined(n), {
      ...profile(n, ip(n), 200 * GB),
      memory: { ramTotal: 256 * GB, ramAvailable: 200 * GB, swapTotal: 0, swapAvailable: 0 },
      runners: { allowExec: true, maxRunners: 8 },
      device: { memoryBandwidthGBps: 100, gflops: 1000 },
    } as ClusterEvent);
  for (const s of NODES)
    for (const k of NODES) if (s !== k) events.push(linkUp(s, k, ip(k)), measured(s, k, ip(k), 1e9, 0.5));
  index = 0;
  let state = apply(emptyState, events);
  const model: WorkloadSpec = {
    ...workload,
    memoryBytes: 100 * GB,
    layers: 40,
    hiddenSize: 8192,
    tokensPerStep: 32,
  } as WorkloadSpec;

  const latency = await handler.handle({ type: 'PlaceInstance', workload: model, instanceId: 'lat' }, state);
  const latencyNodes = (latency.events[0] as Extract<ClusterEvent, { type: 'InstanceCreated' }>).instance.nodes;
  t.equal(latencyNodes.length, 1, 'for step time (the default) one node');

  const placed = await handler.handle(
    { type: 'PlaceInstance', workload: model, objective: 'throughput', instanceId: 'thr' },
    state,
  );
  const created = placed.events[0] as Extract<ClusterEvent, { type: 'InstanceCreated' }>;
  t.equal(created.objective, 'throughput', 'the event carries the objective');
  t.ok(created.instance.nodes.length >= 3, `for tokens/s a pipeline (${created.instance.nodes.join(',')})`);
  state = apply(state, placed.events);
  t.equal(state.instances.thr?.objective, 'throughput', 'the state keeps it');

  state = apply(state, [{ type: 'NodeGone', nodeId: created.instance.nodes[0]!, reason: 'test' }]);
  const again = await handler.handle({ type: 'ReplaceInstance', instanceId: 'thr' }, state);
  const replaced = again.events[0] as Extract<ClusterEvent, { type: 'InstanceReplaced' }>;
  t.equal(replaced.type, 'InstanceReplaced');
  t.equal(
    replaced.instance.nodes.length,
    3,
    `re-placed as a pipeline over the three left (${replaced.instance.nodes})`,
  );
});
