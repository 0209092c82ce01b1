/**
 * Re-placing a model pipeline that lost a node (docs/placement.md, "Re-placing a model pipeline"): the survivors
 * keep their positions and layer ranges, a spare that holds the lost stage's real bytes takes exactly the lost
 * range where the lost node stood; a spare too small (or without links to its neighbours) is not chosen; with no
 * spare that fits, the leader plans afresh as before. Hand-made states, the real planner actor.
 */
import t, { type Test } from 'tap';
import { applyEvents } from '../../../../src/actors/topology-keeper/apply.js';
import { emptyState, type ClusterState } from '../../../../src/actors/topology-keeper/state.js';
import { CommandHandler } from '../../../../src/actors/placement-planner/leader/command-handler.js';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { modelBytesOf } from '../../../../src/actors/placement-planner/search/model-workload.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal, type Plan } from '../../../../src/actors/placement-planner/search/plan-result.js';
import type { ClusterEvent, InstancePlan, WorkloadSpec } from '../../../../src/protocols/events.js';
import { Runtime } from '../../../../src/runtime/runtime.js';
import { siblingModule } from '../../../../src/runtime/module-url.js';
import { indexed, joined, linkUp, profile } from '../../../fixtures/topology/events.js';
import { tinyModelRecord } from '../../../fixtures/placement/tiny-model-record.js';
import { both, makeState } from '../../../fixtures/placement/build-state.js';

const MODEL = '7c'.repeat(32);

/**
 * A hand-made split the planner would not choose (3 layers each; a fresh plan splits by bytes, 1-5-5-1), so a
 * fresh plan cannot keep it by chance: stage 0 holds 35 bytes, 1 and 2 hold 15, 3 holds 35.
 */
const RANGES: [number, number][] = [
  [0, 3],
  [3, 6],
  [6, 9],
  [9, 12],
];
const ORDER = ['a', 'b', 'c', 'd'];
const workload: WorkloadSpec = { kind: 'ring', id: 'llama', model: MODEL, memoryBytes: 100, layers: 12 };

/** Nodes of the given memory, every pair linked both ways; the instance placed on a-b-c-d with RANGES; b gone. */
function stateWith(memory: Record<string, number>): ClusterState {
  const nodes = Object.keys(memory);
  const ip = (n: string): string => `10.77.0.${nodes.indexOf(n) + 1}`;
  const events: ClusterEvent[] = [];
  for (const n of nodes) events.push(joined(n), profile(n, ip(n), memory[n]));
  for (const x of nodes) for (const y of nodes) if (x !== y) events.push(linkUp(x, y, ip(y)));
  events.push({
    type: 'ArtifactHeld',
    nodeId: 'a',
    artifactId: MODEL,
    name: 'llama',
    bytes: 116,
    chunks: 1,
    have: 1,
    model: tinyModelRecord(),
  });
  const instance: InstancePlan = {
    id: 'llama-1',
    backend: 'ring',
    sharding: 'pipeline',
    nodes: ORDER,
    shards: ORDER.map((node, rank) => ({
      node,
      rank,
      worldSize: 4,
      startLayer: RANGES[rank]![0],
      endLayer: RANGES[rank]![1],
    })),
    port: 12000,
  };
  events.push({ type: 'InstanceCreated', instance, workload });
  events.push({ type: 'NodeGone', nodeId: 'b', reason: 'heartbeat timeout' });
  return applyEvents(emptyState, indexed(events, 1));
}

async function replace(t: Test, state: ClusterState) {
  const runtime = new Runtime();
  t.teardown(() => runtime.shutdown());
  await runtime.supervise({
    name: 'placement-planner',
    module: siblingModule(import.meta.url, '../../../../src/actors/placement-planner/worker'),
    options: {},
  });
  const out = await new CommandHandler(runtime).handle({ type: 'ReplaceInstance', instanceId: 'llama-1' }, state);
  const event = out.events[0] as Extract<ClusterEvent, { type: 'InstanceReplaced' }>;
  t.equal(event.type, 'InstanceReplaced');
  return event;
}

const ranges = (p: InstancePlan): [string, number, number][] => p.shards.map((s) => [s.node, s.startLayer, s.endLayer]);

t.test('the survivors keep their stages; the spare that fits takes exactly the lost range', async (t) => {
  // e sorts first and is linked as well as f, but holds 10 bytes: the lost stage (layers 3-5) needs 15.
  const event = await replace(t, stateWith({ a: 40, b: 40, c: 40, d: 40, e: 10, f: 40 }));
  t.same(
    ranges(event.instance),
    [
      ['a', 0, 3],
      ['f', 3, 6],
      ['c', 6, 9],
      ['d', 9, 12],
    ],
    'a, c, d keep position and layers; f stands where b stood with its layers; e (too small) is not chosen',
  );
  t.match(event.reason, /^kept the stages of a, c, d; re-placed layers 3-5 to f: /, event.reason);
});

t.test('no spare fits the lost stage: the leader plans afresh, as before', async (t) => {
  const small = await replace(t, stateWith({ a: 40, b: 40, c: 40, d: 40, e: 10 }));
  t.match(small.reason, /^re-placed on /, `a fresh plan: ${small.reason}`);
  t.notOk(small.instance.nodes.includes('b'), 'without the lost node');
  t.equal(small.instance.shards.at(-1)?.endLayer, 12, 'a whole pipeline');
  const none = await replace(t, stateWith({ a: 40, b: 40, c: 40, d: 40 }));
  t.match(none.reason, /^re-placed on /, `no spare at all: ${none.reason}`);
  t.same(none.instance.nodes.slice().sort(), ['a', 'c', 'd'], 'the survivors, re-split (the only nodes left)');
});

t.test(
  'the planner keeps a split: a spare without links to its neighbours is refused, one with them chosen',
  async (t) => {
    const s = makeState(['a', 'c', 'd', 'e', 'f'].map((id) => ({ id, mem: 40 })));
    for (const [x, y] of [
      ['a', 'c'],
      ['c', 'd'],
      ['d', 'a'],
      ['f', 'a'],
      ['f', 'c'],
      ['e', 'd'],
    ] as const)
      both(s, x, y, 'ethernet');
    const request = (nodes: (string | null)[]) => ({
      workload: { id: 'llama', memoryBytes: 100, layers: 12, modelBytes: modelBytesOf(tinyModelRecord()) },
      sharding: 'pipeline',
      backend: 'ring',
      keepStages: { nodes, layers: [3, 3, 3, 3] },
    });
    const plan = (nodes: (string | null)[]) =>
      planPlacement(decodePlacementInput(s), decodePlacementRequest(request(nodes)), { seed: 3 });
    const kept = plan(['a', null, 'c', 'd']);
    if (isRefusal(kept)) throw new Error(kept.refusal.message);
    t.same(
      ranges((kept as Plan).instance as InstancePlan).map((r) => r[0]),
      ['a', 'f', 'c', 'd'],
      'f sits between a and c',
    );
    t.equal((kept as Plan).explanation.chosen?.by, 'kept-stages');
    t.match(
      (kept as Plan).explanation.chosen?.why[0],
      /kept the surviving stages: a layers 0-2, c layers 6-8, d layers 9-11/,
    );
    // Last, between d and rank 0 (a): e has a link to d but not to a, f to a but not to d; neither can stand there.
    const refused = plan(['a', 'c', 'd', null]);
    t.ok(isRefusal(refused), 'refused');
    if (isRefusal(refused)) t.match(refused.refusal.message, /no spare node fits layers 9-11: .*no usable link/);
    t.throws(
      () =>
        decodePlacementRequest({
          ...request(['a', null, 'c', 'd']),
          keepStages: { nodes: ['a', null], layers: [3, 3] },
        }),
      /keepStages: its stages hold 6 layers, the workload has 12/,
    );
    t.throws(() => decodePlacementRequest({ ...request(['a', null, 'c', 'a']) }), /keepStages: names a node twice/);
  },
);
