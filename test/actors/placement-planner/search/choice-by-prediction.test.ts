import t, { type Test } from 'tap';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal, type Plan, type PlanResult } from '../../../../src/actors/placement-planner/search/plan-result.js';
import { previewPlacements } from '../../../../src/actors/placement-planner/search/previews.js';
import { ValidationError } from '../../../../src/protocols/errors.js';
import { both, GB, makeState, request, type StateJson } from '../../../fixtures/placement/build-state.js';

const plan = (state: StateJson, req: Record<string, unknown>, seed = 7): PlanResult =>
  planPlacement(decodePlacementInput(state), decodePlacementRequest(req), { seed });
const mustPlan = (t: Test, result: PlanResult): Plan => {
  if (isRefusal(result)) t.fail(`unexpected refusal: ${result.refusal.message}`);
  return result as Plan;
};
const device = (s: StateJson, id: string, memoryBandwidthGBps: number, gflops: number): void => {
  const node = s.nodes.find((n) => n.id === id) as Record<string, unknown>;
  node.device = { memoryBandwidthGBps, gflops };
};
const sorted = (p: Plan): string[] => [...p.instance.nodes].sort();

/**
 * a and b can hold the model together but are joined by a slow path (100 Mbit/s, 10 ms); c, d, e, f sit on a fast
 * ring (40 Gbit/s, 0.1 ms) with b's memory spread thinner. All nodes are equally fast.
 */
function slowPairFastRing(): StateJson {
  const s = makeState([
    { id: 'a', mem: 60 * GB },
    { id: 'b', mem: 60 * GB },
    { id: 'c', mem: 30 * GB },
    { id: 'd', mem: 30 * GB },
    { id: 'e', mem: 30 * GB },
    { id: 'f', mem: 30 * GB },
  ]);
  for (const id of 'abcdef') device(s, id, 400, 16000);
  both(s, 'a', 'b', 'wifi', { bw: 1e8, rtt: 20 });
  const ring = ['c', 'd', 'e', 'f'];
  for (let i = 0; i < 4; i++)
    both(s, ring[i] as string, ring[(i + 1) % 4] as string, 'thunderbolt', { bw: 4e10, rtt: 0.1 });
  // a and b reach the ring only over the slow path too
  for (const x of ['a', 'b']) for (const y of ring) both(s, x, y, 'wifi', { bw: 1e8, rtt: 20 });
  return s;
}

const model = { memoryBytes: 100 * GB, layers: 40, hiddenSize: 8192, tokensPerStep: 32 };

const decode = { ...model, tokensPerStep: 1 };

t.test('the smallest set loses to a larger one on a fast ring (slow link)', async (t) => {
  // Decode on fast machines: 250 ms of weights per token in all; the pair's two Wi-Fi hops add ~23 ms (9 %).
  const state = slowPairFastRing();
  const p = mustPlan(t, plan(state, request({}, decode)));
  t.same(sorted(p), ['c', 'd', 'e', 'f']);
  const chosen = p.explanation.chosen;
  t.equal(chosen?.by, 'prediction');
  t.ok(chosen?.runnerUp, 'names the runner-up');
  t.ok((p.predicted.stepMs as number) < (chosen?.runnerUp?.predicted.stepMs as number));
  t.match(chosen?.why[0], /least predicted step time/);
  t.match(chosen?.why[1], /runner-up/);
  // Today's rule (no device figures) takes the smallest feasible set, the slow pair.
  const bare = slowPairFastRing();
  for (const n of bare.nodes) delete n.device;
  const exo = mustPlan(t, plan(bare, request({}, decode)));
  t.same(sorted(exo), ['a', 'b']);
  t.equal(exo.explanation.chosen?.by, 'preference');
  t.equal(exo.predicted.stepMs, null);
  t.ok(exo.predicted.unmeasured.includes('a: gflops'));
});

t.test('a weak node loses: a fast node with less memory is used instead', async (t) => {
  // a+b fit; b is 10× slower than c, and a+c fit too even though c has less memory than b.
  const s = makeState([
    { id: 'a', mem: 60 * GB },
    { id: 'b', mem: 80 * GB },
    { id: 'c', mem: 45 * GB },
  ]);
  device(s, 'a', 100, 1000);
  device(s, 'b', 10, 100);
  device(s, 'c', 100, 1000);
  for (const [x, y] of [
    ['a', 'b'],
    ['b', 'c'],
    ['a', 'c'],
  ] as const)
    both(s, x, y, 'ethernet', { bw: 1e10, rtt: 0.2 });
  const p = mustPlan(t, plan(s, request({}, model)));
  t.same(sorted(p), ['a', 'c']);
  const up = p.explanation.chosen?.runnerUp;
  t.ok(up?.nodes.includes('b'), 'the runner-up uses the weak node');
  t.ok((up?.predicted.stepMs as number) > (p.predicted.stepMs as number));
});

t.test('the smallest set wins when adding nodes only adds hops', async (t) => {
  // Everyone equally fast on 1 Gbit/s: a single node holding the whole model beats any split (no hops).
  const s = makeState([
    { id: 'a', mem: 200 * GB },
    { id: 'b', mem: 200 * GB },
    { id: 'c', mem: 200 * GB },
  ]);
  for (const id of 'abc') device(s, id, 100, 1000);
  for (const [x, y] of [
    ['a', 'b'],
    ['b', 'c'],
    ['a', 'c'],
  ] as const)
    both(s, x, y, 'ethernet', { bw: 1e9, rtt: 0.5 });
  const p = mustPlan(t, plan(s, request({}, model)));
  t.equal(p.instance.nodes.length, 1);
  t.equal(p.explanation.chosen?.by, 'prediction');
  // Throughput: a full 3-stage pipeline runs 3 steps at once, so more stages win.
  const thr = mustPlan(t, plan(s, request({ objective: 'throughput' }, model)));
  t.equal(thr.instance.nodes.length, 3);
  t.ok((thr.predicted.tokensPerS as number) > (p.predicted.tokensPerS as number));
});

t.test('required nodes and memory keep holding under prediction', async (t) => {
  const state = slowPairFastRing();
  const p = mustPlan(t, plan(state, request({ requiredNodes: ['a'] }, model)));
  t.ok(p.instance.nodes.includes('a'));
  let held = 0;
  for (const shard of p.instance.shards) {
    const node = state.nodes.find((n) => n.id === shard.node) as { memory: { ramAvailable: number } };
    t.ok((shard.endLayer - shard.startLayer) * (model.memoryBytes / model.layers) <= node.memory.ramAvailable);
    held += shard.endLayer - shard.startLayer;
  }
  t.equal(held, model.layers);
});

t.test('options within 2 % of the fastest count as equal: the smaller set keeps winning', async (t) => {
  // Slow machines, 32-token steps: compute bound (6.4 s); the pair's slow hops cost 1.6 %, within noise.
  const state = slowPairFastRing();
  for (const n of state.nodes) n.device = { memoryBandwidthGBps: 100, gflops: 1000 };
  const p = mustPlan(t, plan(state, request({}, model)));
  t.same(sorted(p), ['a', 'b']);
  const up = p.explanation.chosen?.runnerUp?.predicted.stepMs as number;
  t.ok(up < (p.predicted.stepMs as number), 'the runner-up predicts slightly faster');
  t.ok((p.predicted.stepMs as number) <= up * 1.02);
});

t.test('deterministic for a seed, and previews carry predictions', async (t) => {
  const state = slowPairFastRing();
  t.same(plan(state, request({}, model), 3), plan(state, request({}, model), 3));
  const previews = previewPlacements(decodePlacementInput(state), decodePlacementRequest(request({}, model)), {
    seed: 3,
  });
  const four = previews.find((p) => p.sharding === 'pipeline' && p.backend === 'ring' && p.nodeCount === 4);
  t.ok(four && 'plan' in four && typeof four.plan.predicted.tokensPerS === 'number');
});

t.test('bad workload descriptions are refused naming the field', async (t) => {
  const bad: [Record<string, unknown>, Record<string, unknown>, RegExp][] = [
    [{}, { bytesPerLayer: 0 }, /request\.workload\.bytesPerLayer/],
    [{}, { activationBytesPerToken: -1 }, /request\.workload\.activationBytesPerToken/],
    [{}, { flopsPerTokenPerLayer: 'many' }, /request\.workload\.flopsPerTokenPerLayer/],
    [{}, { tokensPerStep: 1.5 }, /request\.workload\.tokensPerStep/],
    [{ objective: 'fastest' }, {}, /request\.objective/],
  ];
  for (const [over, w, re] of bad) t.throws(() => decodePlacementRequest(request(over, w)), re);
  t.throws(() => decodePlacementRequest(request({}, { tokensPerStep: 0 })), ValidationError);
  t.throws(
    () => decodePlacementInput({ nodes: [{ id: 'a', device: { gflops: -1 } }] }),
    /state\.nodes\[0\]\.device\.gflops/,
  );
});
