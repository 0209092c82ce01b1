import t from 'tap';
import { checkPinnedNodes, planPinned, restrictState } from '../../../src/bench/live/pinned-option.js';
import { decodePlacementInput } from '../../../src/actors/placement-planner/cluster-state.js';
import { decodePlacementRequest } from '../../../src/actors/placement-planner/placement-request.js';
import { planPlacement } from '../../../src/actors/placement-planner/plan-placement.js';
import type { PlacementState } from '../../../src/actors/topology-keeper/placement-state.js';
import { requestCodecs } from '../../../src/api/request-schemas.js';

const MiB = 2 ** 20;
// a, b, c on a LAN (10.77.0.x); a and b also joined by a cable (10.77.1.x), measured faster.
const ids = ['a', 'b', 'c'];
const lan = (n: string) => `10.77.0.${ids.indexOf(n) + 1}`;
const live: PlacementState = {
  nodes: ids.map((id, i) => ({
    id,
    memory: { ramAvailable: (i + 1) * 16 * MiB, ramTotal: 64 * MiB },
    interfaces: [
      { name: 'lan0', ip: lan(id), type: 'ethernet' as const },
      ...(id !== 'c' ? [{ name: 'p2p1', ip: `10.77.1.${i + 1}`, type: 'thunderbolt' as const }] : []),
    ],
    device: { memoryBandwidthGBps: 10, gflops: 10 },
  })),
  links: ids.flatMap((s) =>
    ids
      .filter((d) => d !== s)
      .flatMap((d) => [
        { source: s, sink: d, ip: lan(d), rttMs: 0.2, bandwidthBps: 1e9 },
        ...(s !== 'c' && d !== 'c'
          ? [{ source: s, sink: d, ip: `10.77.1.${ids.indexOf(d) + 1}`, rttMs: 0.1, bandwidthBps: 4e9 }]
          : []),
      ]),
  ),
};
const request = {
  workload: { id: 'w', memoryBytes: 48 * MiB, layers: 6, hiddenSize: 64 },
  sharding: 'pipeline',
  backend: 'ring',
};
const ask = async (body: { state: PlacementState; request: Record<string, unknown> }) =>
  planPlacement(decodePlacementInput(body.state), decodePlacementRequest(body.request), { seed: 3 });

t.test('a pinned option runs in the given order with the planner split and the planner addresses', async (t) => {
  for (const order of [
    ['c', 'b', 'a'],
    ['a', 'b', 'c'],
  ]) {
    const plan = await planPinned(ask, live, order, request);
    t.same(plan.nodes, order, `ranks in the given order ${order}`);
    const layers = Object.fromEntries(plan.shards.map((s) => [s.node, s.endLayer - s.startLayer]));
    t.same(layers, { a: 1, b: 2, c: 3 }, 'layers follow memory, whatever the order');
    t.same(
      plan.shards.map((s) => [s.rank, s.startLayer]),
      order.map((_, r) => [r, order.slice(0, r).reduce((sum, n) => sum + (layers[n] as number), 0)]),
      'consecutive ranges in rank order',
    );
    const next = (node: string) => {
      const r = order.indexOf(node);
      return plan.hostsByNode?.[node]?.[(r + 1) % 3]?.ip;
    };
    t.equal(next('a') === '10.77.1.2' || next('a') === lan('c'), true, 'a dials its right neighbour');
    if (order[1] === 'b' && order[0] === 'a') t.equal(next('a'), '10.77.1.2', 'a→b over the faster cable');
    t.equal(next('c'), lan(order[(order.indexOf('c') + 1) % 3] as string), 'c has only the LAN');
    t.equal(plan.meshAddresses, undefined, 'no mesh addresses: they followed the planner order');
  }
});

t.test(
  'a pinned option that cannot hold the workload is a placement refusal; unknown nodes are 404s, repeated ones 400s',
  async (t) => {
    await t.rejects(planPinned(ask, live, ['a'], request), { code: 'TORUS_PLACEMENT_REFUSED', message: /memory/ });
    t.throws(() => checkPinnedNodes(live, ['a', 'x']), { code: 'TORUS_NODE_UNKNOWN', details: { unknown: ['x'] } });
    t.throws(() => checkPinnedNodes(live, ['a', 'b', 'a']), {
      code: 'TORUS_API_VALIDATION',
      details: { path: 'nodes[2]' },
    });
    const pinned = { workload: request.workload, nodes: ['a'] };
    for (const beside of [{ requiredNodes: ['a'] }, { minNodes: 2 }])
      t.throws(() => requestCodecs.pipelineBench.decode({ ...pinned, ...beside }), {
        code: 'TORUS_API_VALIDATION',
        details: { where: 'body', path: 'nodes' },
        message: /cannot be combined with minNodes or requiredNodes/,
      });
    t.doesNotThrow(() => requestCodecs.pipelineBench.decode({ workload: request.workload, minNodes: 2 }));
    t.doesNotThrow(() => requestCodecs.pipelineBench.decode(pinned));
    t.same(
      restrictState(live, ['a', 'c']).links.map((l) => `${l.source}${l.sink}`),
      ['ac', 'ca'],
      'the planner sees only the links inside the option',
    );
  },
);
