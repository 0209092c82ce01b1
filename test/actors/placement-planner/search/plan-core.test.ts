import t, { type Test } from 'tap';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { allocateLayersProportionally } from '../../../../src/actors/placement-planner/search/layer-split.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../../../src/actors/placement-planner/search/plan-placement.js';
import {
  isRefusal,
  type Plan,
  type PlanResult,
  type Refusal,
} from '../../../../src/actors/placement-planner/search/plan-result.js';
import { both, GB, makeState, request, type StateJson } from '../../../fixtures/placement/build-state.js';

const plan = (state: StateJson, req: Record<string, unknown>, seed = 7): PlanResult =>
  planPlacement(decodePlacementInput(state), decodePlacementRequest(req), { seed });
const mustPlan = (t: Test, result: PlanResult): Plan => {
  if (isRefusal(result)) t.fail(`unexpected refusal: ${result.refusal.message}`);
  return result as Plan;
};
const mustRefuse = (t: Test, result: PlanResult): Refusal => {
  if (!isRefusal(result)) t.fail(`expected a refusal, got a plan on ${(result as Plan).instance.nodes.join(',')}`);
  return (result as { refusal: Refusal }).refusal;
};
const layers = (p: Plan): number[] => p.instance.shards.map((s) => s.endLayer - s.startLayer);

t.test('largest-remainder split, exo examples', async (t) => {
  t.same(allocateLayersProportionally(12, [0.25, 0.25, 0.25, 0.25]), [3, 3, 3, 3]);
  t.same(allocateLayersProportionally(12, [0.25, 0.25, 0.5]), [3, 3, 6]);
  t.same(allocateLayersProportionally(20, [0.975, 0.0125, 0.0125]), [18, 1, 1]);
  t.same(allocateLayersProportionally(10, [1]), [10]);
  t.same(allocateLayersProportionally(3, [0.33, 0.33, 0.34]), [1, 1, 1]);
});

function triangle(mems: number[]): StateJson {
  const s = makeState(mems.map((mem, i) => ({ id: 'abc'[i] as string, mem })));
  both(s, 'a', 'b', 'ethernet');
  both(s, 'b', 'c', 'ethernet');
  both(s, 'a', 'c', 'ethernet');
  return s;
}

t.test('pipeline layers follow memory: 500/500/1000 with 12 layers → 3/3/6', async (t) => {
  const p = mustPlan(
    t,
    plan(triangle([500 * GB, 500 * GB, 1000 * GB]), request({}, { memoryBytes: 1900 * GB, layers: 12 })),
  );
  t.same(p.instance.nodes, ['a', 'b', 'c']);
  t.same(layers(p), [3, 3, 6]);
  t.same(
    p.instance.shards.map((s) => [s.startLayer, s.endLayer]),
    [
      [0, 3],
      [3, 6],
      [6, 12],
    ],
  );
  t.ok(p.instance.shards.every((s, rank) => s.rank === rank && s.worldSize === 3));
});

t.test('pipeline layers: 900/50/50 with 20 layers → 18/1/1 (the largest donates)', async (t) => {
  const p = mustPlan(
    t,
    plan(triangle([900 * GB, 50 * GB, 50 * GB]), request({ minNodes: 3 }, { memoryBytes: 990 * GB, layers: 20 })),
  );
  const byNode = Object.fromEntries(p.instance.shards.map((s) => [s.node, s.endLayer - s.startLayer]));
  t.same(byNode, { a: 18, b: 1, c: 1 });
});

t.test('memory refusals name memory and the numbers', async (t) => {
  const r = mustRefuse(t, plan(triangle([1 * GB, 1 * GB, 1 * GB]), request({}, { memoryBytes: 5 * GB })));
  t.equal(r.kind, 'memory');
  t.match(r.message, /memory/);
  t.match(r.message, /5\.00 GB/);
  t.match(r.message, /3\.00 GB/);
  // Enough in total, but not within any set that can form a ring (c is cut off).
  const s = makeState([
    { id: 'a', mem: 2 * GB },
    { id: 'b', mem: 2 * GB },
    { id: 'c', mem: 8 * GB },
  ]);
  both(s, 'a', 'b', 'ethernet');
  const r2 = mustRefuse(t, plan(s, request({ minNodes: 2 }, { memoryBytes: 5 * GB })));
  t.equal(r2.kind, 'ring', 'the sets with enough memory cannot form a ring');
  t.match(r2.message, /2 node\(s\): 3 set\(s\) considered, 1 lack memory .*2 cannot form a ring/);
  t.match(r2.message, /3 node\(s\): ring: only 0 node/);
  t.ok(r2.explanation.sizes.length > 0, 'explains each size');
  // Per-node check: a node's pipeline share does not fit.
  const r3 = mustRefuse(
    t,
    plan(triangle([900 * GB, 10 * GB, 90 * GB]), request({ minNodes: 3 }, { memoryBytes: 999 * GB, layers: 3 })),
  );
  t.equal(r3.kind, 'memory');
  t.match(r3.message, /not enough memory on b/);
  // A node without a memory figure can be in no plan.
  const s4 = makeState([{ id: 'a', mem: 4 * GB }, { id: 'b' }]);
  both(s4, 'a', 'b', 'ethernet');
  const r4 = mustRefuse(t, plan(s4, request({ requiredNodes: ['b'] })));
  t.match(r4.message, /b has no memory figure/);
});

t.test('other refusals say what is missing', async (t) => {
  const tri = triangle([4 * GB, 4 * GB, 4 * GB]);
  const noTensor = mustRefuse(t, plan(tri, request({ sharding: 'tensor' }, { hiddenSize: 4096 })));
  t.equal(noTensor.kind, 'tensor');
  t.match(noTensor.message, /does not support tensor/);
  t.match(
    mustRefuse(t, plan(tri, request({ requiredNodes: ['zz'] }))).message,
    /Required node zz is not in the cluster state/,
  );
  t.match(mustRefuse(t, plan(tri, request({ minNodes: 4 }))).message, /at least 4 nodes but only 3/);
  const chain = makeState([
    { id: 'a', mem: 4 * GB },
    { id: 'b', mem: 4 * GB },
    { id: 'c', mem: 4 * GB },
  ]);
  both(chain, 'a', 'b', 'ethernet');
  both(chain, 'b', 'c', 'ethernet');
  const noRing = mustRefuse(t, plan(chain, request({ minNodes: 3 })));
  t.equal(noRing.kind, 'ring');
  t.match(noRing.message, /ring/);
  t.match(mustRefuse(t, plan(tri, request({ minNodes: 3 }, { layers: 2 }))).message, /2 layers/);
});

t.test('tensor sharding: the node count must divide hiddenSize and kvHeads', async (t) => {
  const tri = triangle([4 * GB, 4 * GB, 4 * GB]);
  const w = { supportsTensor: true, memoryBytes: 6 * GB };
  const two = mustPlan(t, plan(tri, request({ sharding: 'tensor' }, { ...w, hiddenSize: 4096 })));
  t.equal(two.instance.nodes.length, 2);
  t.equal(two.instance.sharding, 'tensor');
  t.ok(
    two.instance.shards.every((s) => s.startLayer === 0 && s.endLayer === 12),
    'every node holds all layers',
  );
  const r = mustRefuse(t, plan(tri, request({ sharding: 'tensor', minNodes: 3 }, { ...w, hiddenSize: 4096 })));
  t.equal(r.kind, 'tensor');
  t.match(r.message, /hidden size 4096 is not divisible by 3/);
  const kv = mustRefuse(
    t,
    plan(tri, request({ sharding: 'tensor', minNodes: 3 }, { ...w, hiddenSize: 3072, kvHeads: 8 })),
  );
  t.match(kv.message, /kv heads 8 is not divisible by 3/);
  const three = mustPlan(
    t,
    plan(tri, request({ sharding: 'tensor', minNodes: 3 }, { ...w, hiddenSize: 3072, kvHeads: 6 })),
  );
  t.equal(three.instance.nodes.length, 3);
  t.match(mustRefuse(t, plan(tri, request({ sharding: 'tensor' }, { supportsTensor: true }))).message, /hiddenSize/);
});

t.test('a single node is forced to pipeline + ring', async (t) => {
  const tri = triangle([4 * GB, 4 * GB, 8 * GB]);
  const p = mustPlan(
    t,
    plan(
      tri,
      request({ sharding: 'tensor', backend: 'jaccl' }, { supportsTensor: true, hiddenSize: 7, memoryBytes: 6 * GB }),
    ),
  );
  t.same(p.instance.nodes, ['c']);
  t.equal(p.instance.sharding, 'pipeline');
  t.equal(p.instance.backend, 'ring');
  t.match(p.explanation.chosen?.forced ?? '', /forced/);
  t.same(p.instance.hostsByNode, { c: [{ ip: '0.0.0.0', port: p.instance.port }] });
  t.equal(p.explanation.predictedAllReduce1GiB?.seconds, 0);
});

t.test('leaf preference on a daisy chain', async (t) => {
  // a – b – c – d: a and d are leaves. {b,c} has the most memory but holds no leaf; {c,d} beats {a,b} on memory.
  const s = makeState([
    { id: 'a', mem: 4 * GB },
    { id: 'b', mem: 10 * GB },
    { id: 'c', mem: 10 * GB },
    { id: 'd', mem: 5 * GB },
  ]);
  both(s, 'a', 'b', 'ethernet');
  both(s, 'b', 'c', 'ethernet');
  both(s, 'c', 'd', 'ethernet');
  const p = mustPlan(t, plan(s, request({}, { memoryBytes: 12 * GB })));
  t.same(p.instance.nodes, ['c', 'd']);
  t.match(p.explanation.chosen?.why.join(' ') ?? '', /leaf node \(d\)/);
  const bc = p.explanation.candidates.find((c) => c.nodes.join() === 'b,c');
  t.equal(bc?.outcome, 'not-evaluated');
  t.match(bc?.why ?? '', /no leaf/);
  const ab = p.explanation.candidates.find((c) => c.nodes.join() === 'a,b');
  t.match(ab?.why ?? '', /less memory/);
});

t.test('cached preference: more of the workload already on the nodes wins over memory', async (t) => {
  const s = makeState([
    { id: 'a', mem: 7 * GB },
    { id: 'b', mem: 4 * GB, cached: { w: 1 } },
    { id: 'c', mem: 5 * GB, cached: { w: 0.5, other: 1 } },
  ]);
  both(s, 'a', 'b', 'ethernet');
  both(s, 'b', 'c', 'ethernet');
  both(s, 'a', 'c', 'ethernet');
  const p = mustPlan(t, plan(s, request({}, { memoryBytes: 8 * GB })));
  t.same(p.instance.nodes, ['b', 'c']);
  t.equal(p.explanation.chosen?.cachedScore, 1.5);
});

t.test('address choice: a measured link beats a label', async (t) => {
  const s = makeState([
    { id: 'a', mem: 4 * GB },
    { id: 'b', mem: 4 * GB },
  ]);
  both(s, 'a', 'b', 'thunderbolt', { bw: 1e9, rtt: 0.1 });
  both(s, 'a', 'b', 'ethernet', { bw: 9e9, rtt: 0.3 });
  const p = mustPlan(t, plan(s, request({ minNodes: 2 })));
  const hop = p.explanation.hops?.[0];
  t.equal(hop?.forward?.type, 'ethernet', 'thunderbolt measured slow loses to ethernet measured fast');
  t.equal(p.instance.hostsByNode?.a?.[1]?.ip, hop?.forward?.ip);
  t.equal(p.explanation.chosen?.slowestHopBps, 9e9);
  t.ok((p.explanation.predictedAllReduce1GiB?.seconds ?? 0) > 0);

  const u = makeState([
    { id: 'a', mem: 4 * GB },
    { id: 'b', mem: 4 * GB },
  ]);
  both(u, 'a', 'b', 'thunderbolt');
  both(u, 'a', 'b', 'wifi', { bw: 1e8 });
  t.equal(
    mustPlan(t, plan(u, request({ minNodes: 2 }))).explanation.hops?.[0]?.forward?.type,
    'wifi',
    'measured wifi beats an unmeasured label',
  );

  const l = makeState([
    { id: 'a', mem: 4 * GB },
    { id: 'b', mem: 4 * GB },
  ]);
  both(l, 'a', 'b', 'ethernet');
  both(l, 'a', 'b', 'thunderbolt');
  both(l, 'a', 'b', 'wifi');
  const lp = mustPlan(t, plan(l, request({ minNodes: 2 })));
  t.equal(lp.explanation.hops?.[0]?.forward?.type, 'thunderbolt', 'unmeasured: exo ring table');
  t.equal(lp.explanation.predictedAllReduce1GiB?.seconds, null, 'no prediction from labels');
});

t.test('bottleneck ring order: Thunderbolt ring wired a–c–b–d plus a LAN between all', async (t) => {
  for (const measured of [false, true]) {
    const s = makeState(['a', 'b', 'c', 'd'].map((id) => ({ id, mem: 4 * GB })));
    const tb = measured ? { bw: 20e9, rtt: 0.05 } : {};
    const lan = measured ? { bw: 1e9, rtt: 0.4 } : {};
    for (const [x, y] of [
      ['a', 'b'],
      ['a', 'c'],
      ['a', 'd'],
      ['b', 'c'],
      ['b', 'd'],
      ['c', 'd'],
    ] as const)
      both(s, x, y, 'ethernet', lan);
    for (const [x, y] of [
      ['a', 'c'],
      ['c', 'b'],
      ['b', 'd'],
      ['d', 'a'],
    ] as const)
      both(s, x, y, 'thunderbolt', tb);
    const p = mustPlan(t, plan(s, request({}, { memoryBytes: 15 * GB })));
    t.same(p.instance.nodes, ['a', 'c', 'b', 'd'], `ring order (measured: ${measured})`);
    t.equal(p.explanation.hops?.length, 4);
    t.ok(
      p.explanation.hops?.every((h) => h.forward?.type === 'thunderbolt' && h.backward?.type === 'thunderbolt'),
      'every hop over Thunderbolt',
    );
    // hosts: rank 0 (a) reaches c (rank 1) and d (rank 3) over their Thunderbolt addresses; b is a placeholder.
    const hosts = p.instance.hostsByNode?.a ?? [];
    t.equal(hosts[0]?.ip, '0.0.0.0');
    t.same(hosts[2], { ip: '198.51.100.1', port: 0 });
    t.equal(hosts[1]?.ip, p.explanation.hops?.[0]?.forward?.ip);
    if (measured) t.equal(p.explanation.chosen?.slowestHopBps, 20e9);
  }
});

t.test('required nodes and min nodes restrict the sets', async (t) => {
  const tri = triangle([4 * GB, 4 * GB, 8 * GB]);
  t.same(mustPlan(t, plan(tri, request({ requiredNodes: ['a'] }))).instance.nodes, ['a']);
  t.same(mustPlan(t, plan(tri, request({ requiredNodes: ['a', 'b'] }))).instance.nodes, ['a', 'b']);
  t.same(mustPlan(t, plan(tri, request({ minNodes: 3 }))).instance.nodes.length, 3);
});

t.test('determinism: same input and seed → same output; the port avoids the reserved one', async (t) => {
  const tri = triangle([4 * GB, 4 * GB, 8 * GB]);
  const req = request({ minNodes: 3 });
  t.same(plan(tri, req, 42), plan(tri, req, 42));
  t.equal(JSON.stringify(plan(tri, req, 42)), JSON.stringify(plan(tri, req, 42)));
  const ports = new Set<number>();
  for (let seed = 0; seed < 200; seed++) {
    const p = mustPlan(t, plan(tri, req, seed));
    t.ok(p.instance.port >= 10_000 && p.instance.port < 19_999, `${p.instance.port} and the next in 10000-19999`);
    ports.add(p.instance.port);
  }
  t.ok(ports.size > 150, 'ports vary with the seed');
  // 52414 would put the coordinator (port + 1) on the reserved 52415; 52417's successor is outside the range.
  const reserved = planPlacement(decodePlacementInput(tri), decodePlacementRequest(req), {
    seed: 1,
    portRange: { min: 52_414, max: 52_417 },
    reservedPorts: [52_415],
  });
  t.equal((reserved as Plan).instance.port, 52_416, 'only one port left');
});
