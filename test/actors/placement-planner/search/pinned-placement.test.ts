// A pinned placement (`nodes` in the request): the planner plans exactly that set in that ring order, checks it
// as its own choice, splits the layers, picks each direction's address, predicts it; or refuses with the reason.
import t from 'tap';
import { indexCluster } from '../../../../src/actors/placement-planner/search/cluster-index.js';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { predictPipeline } from '../../../../src/actors/placement-planner/search/cost-model.js';
import { checkPinnedNodesKnown } from '../../../../src/actors/placement-planner/search/pinned-placement.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal, type Plan } from '../../../../src/actors/placement-planner/search/plan-result.js';
import { previewPlacements } from '../../../../src/actors/placement-planner/search/previews.js';
import type { PlacementState } from '../../../../src/actors/topology-keeper/placement-state.js';
import { requestCodecs } from '../../../../src/api/request-schemas.js';

const MiB = 2 ** 20;
// a, b, c on a LAN (10.77.0.x, 1 Gbit/s); a and b also joined by a cable (10.77.1.x, 4 Gbit/s). Memory 16, 32,
// 48 MiB, so c alone holds the 48 MiB workload and the planner, left to itself, places it there.
const ids = ['a', 'b', 'c'];
const lan = (n: string) => `10.77.0.${ids.indexOf(n) + 1}`;
const cable = (n: string) => `10.77.1.${ids.indexOf(n) + 1}`;
const live: PlacementState = {
  nodes: ids.map((id, i) => ({
    id,
    memory: { ramAvailable: (i + 1) * 16 * MiB, ramTotal: 64 * MiB },
    interfaces: [
      { name: 'lan0', ip: lan(id), type: 'ethernet' as const },
      ...(id !== 'c' ? [{ name: 'p2p1', ip: cable(id), type: 'thunderbolt' as const }] : []),
    ],
    device: { memoryBandwidthGBps: 10, gflops: 10 },
  })),
  links: ids.flatMap((s) =>
    ids
      .filter((d) => d !== s)
      .flatMap((d) => [
        { source: s, sink: d, ip: lan(d), rttMs: 0.2, bandwidthBps: 1e9 },
        ...(s !== 'c' && d !== 'c' ? [{ source: s, sink: d, ip: cable(d), rttMs: 0.1, bandwidthBps: 4e9 }] : []),
      ]),
  ),
};
const request = {
  workload: { id: 'w', memoryBytes: 48 * MiB, layers: 6, hiddenSize: 64 },
  sharding: 'pipeline',
  backend: 'ring',
};
const plan = (body: Record<string, unknown>, state: PlacementState = live) =>
  planPlacement(decodePlacementInput(state), decodePlacementRequest(body), { seed: 3 });

/** The address `from` dials `to` at: the cable between a and b, the LAN to and from c. */
const expectedIp = (from: string, to: string) => (from !== 'c' && to !== 'c' ? cable(to) : lan(to));

t.test(
  'a pinned order is honoured exactly: ranks, layer ranges, hostfile, addresses per direction, prediction',
  async (t) => {
    const free = plan(request) as Plan;
    t.same(free.instance.nodes, ['c'], 'left to itself the planner places the workload on c alone');
    for (const order of [
      ['c', 'b', 'a'],
      ['b', 'c', 'a'],
      ['a', 'b', 'c'],
    ]) {
      const result = plan({ ...request, nodes: order });
      t.notOk(isRefusal(result), `${order} fits`);
      const { instance, predicted, explanation } = result as Plan;
      t.same(instance.nodes, order, `ranks in the given order ${order}`);
      t.same(
        instance.shards.map((s) => s.node),
        order,
        'shard r belongs to the r-th node given',
      );
      const layers = Object.fromEntries(instance.shards.map((s) => [s.node, s.endLayer - s.startLayer]));
      t.same(layers, { a: 1, b: 2, c: 3 }, 'layers follow memory, whatever the order');
      t.same(
        instance.shards.map((s) => [s.rank, s.startLayer]),
        order.map((_, r) => [r, order.slice(0, r).reduce((sum, n) => sum + (layers[n] as number), 0)]),
        'consecutive ranges in rank order',
      );
      for (const [r, node] of order.entries()) {
        const next = order[(r + 1) % 3] as string,
          prev = order[(r + 2) % 3] as string;
        const hosts = instance.hostsByNode?.[node] ?? [];
        t.equal(hosts.length, 3, `${node}: one hostfile entry per rank`);
        t.same(hosts[r], { ip: '0.0.0.0', port: instance.port }, `${node} listens at its own rank`);
        t.equal(
          hosts[(r + 1) % 3]?.ip,
          expectedIp(node, next),
          `${node} dials ${next} at the address for that direction`,
        );
        t.equal(
          hosts[(r + 2) % 3]?.ip,
          expectedIp(node, prev),
          `${node} dials ${prev} at the address for that direction`,
        );
      }
      t.same(
        (explanation.hops ?? []).map((h) => [h.from, h.to, h.forward?.ip]),
        order.map((n, r) => [n, order[(r + 1) % 3], expectedIp(n, order[(r + 1) % 3] as string)]),
        'the explanation names every hop of that order and its address',
      );
      const index = indexCluster(decodePlacementInput(live), 'ring');
      const w = decodePlacementRequest(request).workload;
      const expected = predictPipeline(
        index,
        order.map((n) => index.indexOf.get(n) as number),
        order.map((n) => layers[n] as number),
        w,
        'latency',
      );
      t.ok(expected.stepMs !== null && expected.stepMs > 0, 'the order has a complete prediction');
      t.same(predicted, expected, 'the prediction is for that order (its hops, its stages)');
      t.equal(explanation.chosen?.by, 'pinned');
      t.same(explanation.chosen?.nodes, order);
      t.match(explanation.chosen?.why[0], /^pinned by the request: /);
      t.same(explanation.request.nodes, order, 'the explanation echoes the pinned order');
      t.same(explanation.sizes, [{ size: 3, generation: 'pinned', sets: 1, feasible: 1, dropped: {} }]);
      t.ok(instance.meshAddresses && Object.keys(instance.meshAddresses).length === 3, 'mesh addresses for torch');
    }
  },
);

t.test('a pinned set that cannot hold the workload is refused with the reason', async (t) => {
  const refusal = (body: Record<string, unknown>, state?: PlacementState) => {
    const result = plan(body, state);
    if (!isRefusal(result)) throw new Error(`expected a refusal, placed on ${result.instance.nodes}`);
    return result.refusal;
  };
  const short = refusal({ ...request, nodes: ['a'] });
  t.equal(short.kind, 'memory');
  t.equal(
    short.message,
    'The pinned nodes a cannot hold w: not enough memory: 0.02 GB (16777216 bytes) available, 0.05 GB (50331648 bytes) needed',
  );
  // 2 layers of 24 MiB: one on a (16 MiB) cannot fit, although a and b together have 48 MiB.
  const perNode = refusal({ ...request, workload: { ...request.workload, layers: 2 }, nodes: ['b', 'a'] });
  t.equal(perNode.kind, 'memory');
  t.equal(
    perNode.message,
    'The pinned nodes b, a cannot hold w: not enough memory on a: its 1 layers need 0.03 GB (25165824 bytes), 0.02 GB (16777216 bytes) available',
  );
  t.same(perNode.explanation.candidates[0]?.outcome, 'dropped', 'the explanation names the set dropped');
  const noLink = {
    ...live,
    links: live.links.filter((l) => !(l.source === 'a' && l.sink === 'c') && !(l.source === 'c' && l.sink === 'a')),
  };
  const ring = refusal({ ...request, nodes: ['c', 'a'] }, noLink);
  t.equal(ring.kind, 'ring');
  t.match(ring.message, /the ring hop c ↔ a has no usable link each way/);
  t.equal(refusal({ ...request, backend: 'jaccl', nodes: ['b', 'c'] }).kind, 'rdma', 'jaccl without RDMA');
  const tensor = refusal({
    ...request,
    workload: { ...request.workload, supportsTensor: true },
    sharding: 'tensor',
    nodes: ['a', 'b', 'c'],
  });
  t.equal(tensor.kind, 'tensor');
  t.match(tensor.message, /hidden size 64 is not divisible by 3/);
  t.equal(refusal({ ...request, nodes: ['a', 'x'] }).kind, 'nodes', 'a node the state does not have');
});

t.test('the request: a node given twice is named, nodes goes alone, unknown nodes are a 404', async (t) => {
  t.throws(() => decodePlacementRequest({ ...request, nodes: ['a', 'b', 'a'] }), {
    code: 'TORUS_API_VALIDATION',
    details: { path: 'request.nodes[2]' },
    message: /"a" is given twice \(first at \[0\]\)/,
  });
  for (const beside of [{ requiredNodes: ['a'] }, { minNodes: 2 }])
    t.throws(() => decodePlacementRequest({ ...request, nodes: ['a'], ...beside }), {
      details: { path: 'request.nodes' },
      message: /cannot be combined with minNodes or requiredNodes/,
    });
  t.throws(() => checkPinnedNodesKnown(['a', 'b'], ['a', 'x', 'y']), {
    code: 'TORUS_NODE_UNKNOWN',
    details: { unknown: ['x', 'y'] },
  });
  t.doesNotThrow(() => checkPinnedNodesKnown(['a', 'b'], ['b', 'a']));
  const pinned = { workload: request.workload, nodes: ['a'] };
  for (const [name, codec] of Object.entries({
    createInstance: requestCodecs.createInstance,
    preview: requestCodecs.preview,
    pipelineBench: requestCodecs.pipelineBench,
  })) {
    for (const beside of [{ requiredNodes: ['a'] }, { minNodes: 2 }])
      t.throws(
        () => codec.decode({ ...pinned, ...beside }),
        {
          code: 'TORUS_API_VALIDATION',
          details: { where: 'body', path: 'nodes' },
          message: /cannot be combined with minNodes or requiredNodes/,
        },
        `${name}: nodes alone`,
      );
    t.throws(
      () => codec.decode({ ...pinned, nodes: ['a', 'b', 'b'] }),
      {
        message: 'body nodes[2]: "b" is given twice (first at [1])',
        details: { where: 'body', path: 'nodes[2]' },
      },
      `${name}: the repeated node is named`,
    );
    t.doesNotThrow(() => codec.decode(pinned), `${name}: a pinned body`);
    t.doesNotThrow(() => codec.decode({ workload: request.workload, minNodes: 2 }), `${name}: an unpinned body`);
  }
});

t.test('previews of a pinned set: every sharding × backend on that set in that order', async (t) => {
  const previews = previewPlacements(
    decodePlacementInput(live),
    decodePlacementRequest({
      ...request,
      workload: { ...request.workload, supportsTensor: true, hiddenSize: 66 },
      nodes: ['c', 'a', 'b'],
    }),
    { seed: 3 },
  );
  t.same(
    previews.map((p) => [p.sharding, p.backend, p.nodeCount, 'plan' in p ? p.plan.instance.nodes : p.refusal.kind]),
    [
      ['pipeline', 'ring', 3, ['c', 'a', 'b']],
      ['pipeline', 'jaccl', 3, 'rdma'],
      ['tensor', 'ring', 3, ['c', 'a', 'b']],
      ['tensor', 'jaccl', 3, 'rdma'],
    ],
  );
});
