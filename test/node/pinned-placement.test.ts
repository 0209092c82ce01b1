// Pinned instances through the leader's command handler, planned by the real placement-planner actor on a state
// built from events: the pinned order is the plan; unknown nodes, nodes that refuse the workload and sets that
// cannot hold it are refused with no event; a pinned node leaving fails the instance instead of moving it, and a
// re-placement with every pinned node present keeps the set and the order.
import t from 'tap';
import { applyEvents } from '../../src/actors/topology-keeper/apply.js';
import { emptyState, type ClusterState } from '../../src/actors/topology-keeper/state.js';
import { CommandHandler } from '../../src/actors/placement-planner/leader/command-handler.js';
import type { ClusterEvent, WorkloadSpec } from '../../src/protocols/events.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { siblingModule } from '../../src/runtime/module-url.js';
import { indexed, joined, linkUp, profile } from '../fixtures/topology/events.js';

const NODES = ['a', 'b', 'c', 'd'];
const ip = (n: string): string => `10.77.0.${NODES.indexOf(n) + 1}`;
const workload: WorkloadSpec = { kind: 'exec', id: 'job', memoryBytes: 600, layers: 8, command: '/bin/true', args: [] };
const ORDER = ['c', 'a', 'd'];

let index = 0;
function apply(state: ClusterState, events: readonly ClusterEvent[]): ClusterState {
  const out = applyEvents(state, indexed(events, index + 1));
  index += events.length;
  return out;
}

/** Four nodes of 1000 bytes each, all linked; d does not run exec workloads unless `dRunsExec`. */
function cluster(dRunsExec = true): ClusterState {
  const events: ClusterEvent[] = [];
  for (const n of NODES)
    events.push(joined(n), {
      ...profile(n, ip(n)),
      runners: { allowExec: n !== 'd' || dRunsExec, maxRunners: 8 },
    } as ClusterEvent);
  for (const s of NODES) for (const k of NODES) if (s !== k) events.push(linkUp(s, k, ip(k)));
  index = 0;
  return apply(emptyState, events);
}

t.test('pinned instances: placed in the given order, refused with the reason, never moved', async (t) => {
  const runtime = new Runtime();
  t.teardown(() => runtime.shutdown());
  await runtime.supervise({
    name: 'placement-planner',
    module: siblingModule(import.meta.url, '../../src/actors/placement-planner/worker'),
    options: {},
  });
  const handler = new CommandHandler(runtime);
  let state = cluster();

  const free = await handler.handle({ type: 'PlaceInstance', workload, instanceId: 'free' }, state);
  const freeNodes = (free.events[0] as Extract<ClusterEvent, { type: 'InstanceCreated' }>).instance.nodes;
  t.notSame(freeNodes, ORDER, `left to itself the planner chooses otherwise (${freeNodes})`);

  const placed = await handler.handle({ type: 'PlaceInstance', workload, nodes: ORDER, instanceId: 'pin' }, state);
  const created = placed.events[0] as Extract<ClusterEvent, { type: 'InstanceCreated' }>;
  t.equal(created.type, 'InstanceCreated');
  t.same(created.instance.nodes, ORDER, 'ranks in the pinned order');
  t.same(
    created.instance.shards.map((s) => [s.node, s.rank, s.startLayer, s.endLayer]),
    [
      ['c', 0, 0, 3],
      ['a', 1, 3, 6],
      ['d', 2, 6, 8],
    ],
    'the layers split over the pinned ranks (by memory, ids break ties)',
  );
  t.same(
    ORDER.map((n, r) => created.instance.hostsByNode?.[n]?.[(r + 1) % 3]?.ip),
    ['10.77.0.1', '10.77.0.4', '10.77.0.3'],
    'each rank dials the next pinned rank',
  );
  t.equal(created.pinned, true, 'the event says the instance is pinned');
  t.same(placed.outcome, { instanceId: 'pin', nodes: ORDER });
  state = apply(state, placed.events);
  t.equal(state.instances.pin?.pinned, true, 'the state keeps it');

  await t.rejects(
    handler.handle({ type: 'PlaceInstance', workload, nodes: ['a', 'ghost', 'ghost-2'] }, state),
    { code: 'TORUS_NODE_UNKNOWN', details: { unknown: ['ghost', 'ghost-2'] } },
    'nodes the cluster does not have: named',
  );
  await t.rejects(
    handler.handle({ type: 'PlaceInstance', workload: { ...workload, memoryBytes: 2500 }, nodes: ['b', 'a'] }, state),
    {
      code: 'TORUS_PLACEMENT_REFUSED',
      message: /^The pinned nodes b, a cannot hold job: not enough memory/,
      details: { kind: 'memory' },
    },
    "a set that cannot hold the workload: the planner's reason",
  );
  const at = index;
  const strict = cluster(false);
  index = at;
  await t.rejects(
    handler.handle({ type: 'PlaceInstance', workload, nodes: ['a', 'd'] }, strict),
    { code: 'TORUS_PLACEMENT_REFUSED', message: /^a pinned node cannot run this workload: .*d/ },
    'a pinned node that refuses the workload is named',
  );

  // A runner failed, every pinned node is still there: re-placed on the same nodes in the same order.
  state = apply(state, [{ type: 'InstanceNeedsReplacement', instanceId: 'pin', reason: 'rank 1 failed' }]);
  const again = await handler.handle({ type: 'ReplaceInstance', instanceId: 'pin' }, state);
  const replaced = again.events[0] as Extract<ClusterEvent, { type: 'InstanceReplaced' }>;
  t.equal(replaced.type, 'InstanceReplaced');
  t.same(replaced.instance.nodes, ORDER, 're-placed on the pinned order');
  state = apply(state, again.events);
  t.equal(state.instances.pin?.pinned, true, 'still pinned after a re-placement');

  // A pinned node leaves: b and the others could hold the job, but the instance fails rather than move there.
  state = apply(state, [{ type: 'NodeGone', nodeId: 'a', reason: 'heartbeat timeout' }]);
  const gone = await handler.handle({ type: 'ReplaceInstance', instanceId: 'pin' }, state);
  t.same(gone.events, [
    {
      type: 'InstanceFailed',
      instanceId: 'pin',
      reason:
        'pinned node a left; a pinned placement is not moved to other nodes (place it again once it is back): node a left: heartbeat timeout',
      final: true,
    },
  ]);
  state = apply(state, gone.events);
  t.equal(state.instances.pin?.status, 'failed');
  t.same(state.instances.pin?.plan.nodes, ORDER, 'its plan still names the pinned nodes');
});
