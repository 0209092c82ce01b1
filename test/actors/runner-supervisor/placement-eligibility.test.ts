// Exec policy on the leader: placement skips nodes whose advertised exec policy refuses the command or whose runner
// quota is full, and says which nodes and why; the cluster-wide instance quota refuses with TORUS_QUOTA_EXCEEDED.
// The real placement-planner actor plans on a state built from events (nodes advertise their policy in profiles).
import t from 'tap';
import { applyEvents } from '../../../src/actors/topology-keeper/apply.js';
import { emptyState, type ClusterState } from '../../../src/actors/topology-keeper/state.js';
import { ineligibleNodes } from '../../../src/actors/placement-planner/leader/runner-eligibility.js';
import { decodeState } from '../../../src/actors/topology-keeper/snapshot.js';
import { CommandHandler } from '../../../src/actors/placement-planner/leader/command-handler.js';
import type { ClusterEvent, RunnerPolicy, WorkloadSpec } from '../../../src/protocols/events.js';
import { Runtime } from '../../../src/runtime/runtime.js';
import { siblingModule } from '../../../src/runtime/module-url.js';
import { indexed, joined, linkUp, profile } from '../../fixtures/topology/events.js';

const NODES = ['a', 'b', 'c'];
const ip = (n: string): string => `10.77.0.${NODES.indexOf(n) + 1}`;
const sh: WorkloadSpec = { kind: 'exec', id: 'job', memoryBytes: 100, layers: 6, command: 'sh', args: ['-c', 'true'] };
const py: WorkloadSpec = {
  kind: 'exec',
  id: 'job',
  memoryBytes: 100,
  layers: 6,
  command: '/usr/bin/python3',
  args: ['-c', 'pass'],
};
const ring: WorkloadSpec = { kind: 'ring', id: 'ring', memoryBytes: 100, layers: 6 };

/** a: exec off (or never said, with `silentA`), b: python3 only, c: anything, at most 1 runner. */
function cluster(silentA = false): ClusterState {
  const policies: Record<string, RunnerPolicy | undefined> = {
    a: silentA ? undefined : { allowExec: false, maxRunners: 8 },
    b: { allowExec: ['python3'], maxRunners: 8 },
    c: { allowExec: true, maxRunners: 1 },
  };
  const events: ClusterEvent[] = [];
  for (const n of NODES)
    events.push(joined(n), { ...profile(n, ip(n)), ...(policies[n] ? { runners: policies[n] } : {}) } as ClusterEvent);
  for (const s of NODES) for (const k of NODES) if (s !== k) events.push(linkUp(s, k, ip(k)));
  return applyEvents(emptyState, indexed(events, 1));
}

t.test('ineligibleNodes reads the advertised policy and quota', async (t) => {
  const state = cluster();
  t.same(
    ineligibleNodes(state, sh).map((e) => e.node),
    ['a', 'b'],
  );
  t.same(
    ineligibleNodes(state, py).map((e) => e.node),
    ['a'],
  );
  t.same(
    ineligibleNodes(state, ring).map((e) => e.node),
    [],
    'ring workloads are not exec',
  );
  t.match(
    ineligibleNodes(state, sh)[1]?.reason,
    /^b \(host-b\) refuses exec: "sh" is not allowed by --allow-exec=python3$/,
  );
  t.match(
    ineligibleNodes(cluster(true), py)[0]?.reason,
    /has not advertised an exec policy/,
    'a node that never said is refused',
  );
});

t.test('the leader plans only on nodes that accept the runner, and a refusal names the others', async (t) => {
  const runtime = new Runtime();
  t.teardown(() => runtime.shutdown());
  await runtime.supervise({
    name: 'placement-planner',
    module: siblingModule(import.meta.url, '../../../src/actors/placement-planner/worker'),
    options: {},
  });
  const handler = new CommandHandler(runtime, { maxInstances: 2 });
  let state = cluster();

  const one = await handler.handle({ type: 'PlaceInstance', workload: sh, instanceId: 'sh-1' }, state);
  const created = one.events[0] as Extract<ClusterEvent, { type: 'InstanceCreated' }>;
  t.same(created.instance.nodes, ['c'], 'sh goes to the only node that allows it');
  state = applyEvents(state, indexed(one.events, state.lastIndex + 1));

  await t.rejects(
    handler.handle({ type: 'PlaceInstance', workload: sh, instanceId: 'sh-2' }, state),
    {
      code: 'TORUS_PLACEMENT_REFUSED',
      message:
        /no node can run this workload: a \(host-a\) refuses exec: exec is off \(no --allow-exec\); b \(host-b\) refuses exec: "sh" is not allowed by --allow-exec=python3; c \(host-c\) is at its runner quota \(1 of 1, --max-runners\)/,
    },
    'c is full now: every node is named with its reason',
  );
  await t.rejects(
    handler.handle({ type: 'PlaceInstance', workload: py, instanceId: 'py-1', requiredNodes: ['a'] }, state),
    {
      code: 'TORUS_PLACEMENT_REFUSED',
      message: /a required node cannot run this workload: a \(host-a\) refuses exec/,
    },
  );
  await t.rejects(
    handler.handle({ type: 'PlaceInstance', workload: py, instanceId: 'py-2', minNodes: 2 }, state),
    {
      code: 'TORUS_PLACEMENT_REFUSED',
      message: /left out: a \(host-a\) refuses exec.*c \(host-c\) is at its runner quota/,
    },
    "the planner's refusal says which nodes were left out and why",
  );
  const plan = created.instance;
  await t.rejects(
    handler.handle(
      {
        type: 'CreateInstance',
        instance: {
          ...plan,
          id: 'given',
          nodes: ['a'],
          shards: [{ ...plan.shards[0]!, node: 'a' }],
          hostsByNode: undefined,
        } as never,
        workload: sh,
      },
      state,
    ),
    {
      code: 'TORUS_PLACEMENT_REFUSED',
      message: /the plan names nodes that refuse this workload: a \(host-a\)/,
    },
    'a given plan may not name a refusing node',
  );

  const py1 = await handler.handle({ type: 'PlaceInstance', workload: py, instanceId: 'py-3' }, state);
  t.same((py1.events[0] as Extract<ClusterEvent, { type: 'InstanceCreated' }>).instance.nodes, ['b']);
  state = applyEvents(state, indexed(py1.events, state.lastIndex + 1));
  await t.rejects(
    handler.handle({ type: 'PlaceInstance', workload: ring, instanceId: 'r-1' }, state),
    {
      code: 'TORUS_QUOTA_EXCEEDED',
      message: /2 live instances, its limit \(--max-instances=2\)/,
    },
    'the cluster-wide instance quota',
  );
  state = applyEvents(
    state,
    indexed([{ type: 'InstanceFailed', instanceId: 'py-3', reason: 'test' }], state.lastIndex + 1),
  );
  const after = await handler.handle({ type: 'PlaceInstance', workload: ring, instanceId: 'r-1' }, state);
  t.equal(after.events[0]?.type, 'InstanceCreated', 'a failed instance holds no quota');

  // A snapshot of this state (advertised policies, instances placed with constraints) installs on another node:
  // found end to end, where a restarted node could not catch up (the snapshot decoder refused both fields).
  const withConstraints = applyEvents(
    state,
    indexed(
      (
        await handler.handle(
          { type: 'PlaceInstance', workload: ring, instanceId: 'r-2', requiredNodes: ['a'], minNodes: 1 },
          state,
        )
      ).events,
      state.lastIndex + 1,
    ),
  );
  t.same(
    decodeState(JSON.parse(JSON.stringify(withConstraints))),
    withConstraints,
    'the snapshot decoder takes profile.runners and requiredNodes/minNodes',
  );
});
