import t from 'tap';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal, type Plan, type PlanResult } from '../../../../src/actors/placement-planner/search/plan-result.js';
import { both, GB, link, makeState, rdma, request, type StateJson } from '../../../fixtures/placement/build-state.js';

const plan = (state: StateJson, req: Record<string, unknown>): PlanResult =>
  planPlacement(decodePlacementInput(state), decodePlacementRequest(req), { seed: 3 });

function rdmaTriangle(enabled = [true, true, true]): { state: StateJson; ethToA: Record<string, string> } {
  const state = makeState(['a', 'b', 'c'].map((id, i) => ({ id, mem: 4 * GB, rdma: enabled[i] as boolean })));
  rdma(state, 'a', 'b');
  rdma(state, 'a', 'c');
  rdma(state, 'b', 'c');
  // b and c reach a over Thunderbolt and over Ethernet: the coordinator must use Ethernet (exo's table).
  const ethToA: Record<string, string> = {};
  for (const x of ['b', 'c']) {
    link(state, x, 'a', 'thunderbolt', { rtt: 0.05 });
    ethToA[x] = link(state, x, 'a', 'ethernet', { rtt: 0.3 });
    link(state, 'a', x, 'ethernet');
  }
  both(state, 'b', 'c', 'ethernet');
  return { state, ethToA };
}

t.test('jaccl: devices matrix in rank order and a rank-0 coordinator', async (t) => {
  const { state, ethToA } = rdmaTriangle();
  const result = plan(state, request({ backend: 'jaccl', minNodes: 3 }));
  if (isRefusal(result)) {
    t.fail(result.refusal.message);
    return;
  }
  const p = result as Plan;
  const { nodes, jacclDevices, jacclCoordinators, port } = p.instance;
  t.equal(p.instance.backend, 'jaccl');
  t.equal(p.instance.hostsByNode, undefined);
  t.equal(nodes[0], 'a', 'rank 0 is the node every other node can reach');
  t.equal(jacclDevices?.length, 3);
  nodes.forEach((from, i) =>
    nodes.forEach((to, j) => {
      t.equal(jacclDevices?.[i]?.[j], i === j ? null : `rdma_${from}_${to}`, `[${i}][${j}]`);
    }),
  );
  t.equal(jacclCoordinators?.a, `0.0.0.0:${port}`);
  t.equal(jacclCoordinators?.b, `${ethToA.b}:${port}`, 'b dials the coordinator over Ethernet, not Thunderbolt');
  t.equal(jacclCoordinators?.c, `${ethToA.c}:${port}`);
  t.equal(p.explanation.coordinator?.node, 'a');
  t.equal(p.instance.shards[0]?.rank, 0);
});

t.test('jaccl refusals: RDMA disabled, a missing RDMA pair, no route to a coordinator', async (t) => {
  const off = plan(rdmaTriangle([true, false, true]).state, request({ backend: 'jaccl', minNodes: 3 }));
  t.ok(
    isRefusal(off) && off.refusal.kind === 'rdma' && /RDMA enabled on every node: not on b/.test(off.refusal.message),
    isRefusal(off) ? off.refusal.message : 'plan',
  );
  const { state } = rdmaTriangle();
  state.links = state.links.filter((l) => !(l.source === 'b' && l.sink === 'c' && l.rdma));
  const missing = plan(state, request({ backend: 'jaccl', minNodes: 3 }));
  t.ok(
    isRefusal(missing) && /all-to-all RDMA: no RDMA link b → c/.test(missing.refusal.message),
    isRefusal(missing) ? missing.refusal.message : 'plan',
  );
  const bare = makeState(['a', 'b'].map((id) => ({ id, mem: 4 * GB, rdma: true })));
  rdma(bare, 'a', 'b');
  const noRoute = plan(bare, request({ backend: 'jaccl', minNodes: 2 }));
  t.ok(
    isRefusal(noRoute) && noRoute.refusal.kind === 'coordinator',
    isRefusal(noRoute) ? noRoute.refusal.message : 'plan',
  );
});

t.test('jaccl prefers the smallest set that has RDMA, not just the smallest set', async (t) => {
  // a+b fit the memory but have no RDMA; a, c, d have all-to-all RDMA: torus plans the 3-node set.
  const state = makeState(
    ['a', 'b', 'c', 'd'].map((id) => ({ id, mem: id === 'b' ? 5 * GB : 3 * GB, rdma: id !== 'b' })),
  );
  for (const [x, y] of [
    ['a', 'b'],
    ['a', 'c'],
    ['a', 'd'],
    ['b', 'c'],
    ['b', 'd'],
    ['c', 'd'],
  ] as const)
    both(state, x, y, 'ethernet');
  rdma(state, 'a', 'c');
  rdma(state, 'a', 'd');
  rdma(state, 'c', 'd');
  const result = plan(state, request({ backend: 'jaccl' }, { memoryBytes: 7.5 * GB }));
  t.same(isRefusal(result) ? result.refusal.message : (result as Plan).instance.nodes.slice().sort(), ['a', 'c', 'd']);
});
