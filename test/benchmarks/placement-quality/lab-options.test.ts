import t from 'tap';
import {
  cycleKey,
  exoRuleOption,
  feasibleOptions,
  measuredNextHops,
  placementStateFromTopology,
  ringOrders,
} from '../../../benchmarks/placement-quality/lab-options.js';

const MiB = 2 ** 20;

/**
 * The benchmark's lab in miniature: a, b, c joined by 4 Gbit/s cables (thunderbolt) beside a 1 Gbit/s LAN; d on
 * the LAN only at 100 Mbit/s with more memory. 48 MiB needed: 2 nodes fit only with d, 3 without it.
 */
function lab(): { nodes: Record<string, unknown>[]; links: Record<string, unknown>[] } {
  const ids = ['a', 'b', 'c', 'd'];
  const lan = (n: string) => `10.77.0.${ids.indexOf(n) + 1}`;
  const cable = (from: string, to: string) => `10.77.${ids.indexOf(from) + ids.indexOf(to) + 1}.${ids.indexOf(to) + 1}`;
  const nodes = ids.map((id) => ({
    id,
    memory: { ramAvailable: (id === 'd' ? 32 : 16) * MiB, ramTotal: 64 * MiB },
    interfaces: [{ name: 'lan0', ip: lan(id), type: 'ethernet' }],
    device: { memoryBandwidthGBps: 10, gflops: 100 },
  }));
  const links: Record<string, unknown>[] = [];
  for (const s of ids)
    for (const d of ids) {
      if (s === d) continue;
      const far = s === 'd' || d === 'd';
      links.push({ source: s, sink: d, ip: lan(d), rttMs: far ? 1 : 0.2, bandwidthBps: far ? 1e8 : 1e9 });
      if (!far) {
        links.push({ source: s, sink: d, ip: cable(s, d), rttMs: 0.1, bandwidthBps: 4e9 });
        nodes[ids.indexOf(d)]!.interfaces.push({ name: `p2p-${s}`, ip: cable(s, d), type: 'thunderbolt' });
      }
    }
  return { nodes, links };
}
const request = {
  workload: {
    id: 'w',
    memoryBytes: 48 * MiB,
    layers: 12,
    activationBytesPerToken: 65536,
    flopsPerTokenPerLayer: 1000,
    tokensPerStep: 4,
  },
  sharding: 'pipeline',
  backend: 'ring',
};

t.test('ring orders: each cycle once (rotations and reversals are the same pipeline)', async (t) => {
  t.same(ringOrders([0]), [[0]]);
  t.same(ringOrders([0, 1]), [[0, 1]]);
  t.same(ringOrders([0, 1, 2]), [[0, 1, 2]]);
  t.equal(ringOrders([0, 1, 2, 3]).length, 3, '(4−1)!/2');
  t.equal(ringOrders([0, 1, 2, 3, 4]).length, 12, '(5−1)!/2');
  t.equal(cycleKey(['c', 'a', 'b']), cycleKey(['a', 'b', 'c']), 'a rotation');
  t.equal(cycleKey(['a', 'c', 'b']), cycleKey(['a', 'b', 'c']), 'the reverse');
  t.not(cycleKey(['a', 'c', 'b', 'd']), cycleKey(['a', 'b', 'c', 'd']), 'another cycle');
});

t.test(
  'every feasible option: sets of every size that hold the workload, each cycle, priced by the cost model',
  async (t) => {
    const options = feasibleOptions(lab(), request);
    const keys = options.map((o) => cycleKey(o.nodes)).sort();
    // 2 nodes: only with d (16 + 16 < 48); 3 nodes: all four sets; 4 nodes: three cycles.
    t.same(keys, ['a,b,c', 'a,b,c,d', 'a,b,d', 'a,b,d,c', 'a,c,b,d', 'a,c,d', 'a,d', 'b,c,d', 'b,d', 'c,d'].sort());
    t.equal(new Set(keys).size, keys.length, 'no cycle twice');
    for (const o of options) {
      t.equal(
        o.layers.reduce((s, x) => s + x, 0),
        12,
        `${o.nodes}: every layer placed`,
      );
      t.ok((o.predicted.stepMs ?? 0) > 0, `${o.nodes}: a complete prediction`);
    }
    t.same(cycleKey(options[0]!.nodes), 'a,b,c', 'fastest predicted: the cable triangle');
    t.ok(
      options.every(
        (o, i) => i === 0 || (o.predicted.stepMs as number) >= (options[i - 1]!.predicted.stepMs as number),
      ),
      'sorted by predicted step time',
    );
    const ad = options.find((o) => cycleKey(o.nodes) === 'a,d')!;
    t.same(ad.layers, ad.nodes[0] === 'a' ? [4, 8] : [8, 4], 'layers by memory (d holds twice as much)');
  },
);

t.test("exo's rule: the smallest feasible set, addresses by label (the planner with nothing measured)", async (t) => {
  const state = lab();
  const exo = exoRuleOption(state, request)!;
  t.equal(exo.nodes.length, 2, 'the smallest feasible size');
  t.ok(exo.nodes.includes('d'), 'with the big-memory node behind the slow link');
  // d with little memory: three cable nodes are the smallest feasible set; exo dials by label.
  const small = lab();
  (small.nodes[3]!.memory as { ramAvailable: number }).ramAvailable = 8 * MiB;
  const tri = exoRuleOption(small, request)!;
  t.same(cycleKey(tri.nodes), 'a,b,c');
  t.same(tri.nextHop, measuredNextHops(small, tri.nodes), 'labels and measurements agree: the cables');
  t.ok(
    tri.nextHop.every((ip) => !ip.startsWith('10.77.0.')),
    'the cable addresses',
  );
  // Mislabelled: the LAN called thunderbolt, the cables ethernet. exo follows the labels, the planner the measurements.
  for (const n of small.nodes)
    for (const i of n.interfaces as { name: string; type: string }[])
      i.type = i.name === 'lan0' ? 'thunderbolt' : 'ethernet';
  const wrong = exoRuleOption(small, request)!;
  t.ok(
    wrong.nextHop.every((ip) => ip.startsWith('10.77.0.')),
    'exo: the LAN, by its label',
  );
  t.ok(
    measuredNextHops(small, wrong.nodes).every((ip) => !ip.startsWith('10.77.0.')),
    'measured first: the cables',
  );
});

t.test('the topology view becomes the planner state', async (t) => {
  const view = {
    nodes: [
      {
        id: 'a',
        name: 'h0',
        role: 'leader',
        memory: { ramAvailable: 1, ramTotal: 2 },
        interfaces: [{ name: 'lan0', ip: '10.77.0.1', type: 'ethernet' }],
        device: { memoryBandwidthGBps: 5, gflops: 1, gflopsSource: 'measured', measuredAt: 9 },
      },
      { id: 'b', name: 'h1' },
    ],
    links: [
      { source: 'b', sink: 'a', ip: '10.77.0.1', type: 'ethernet', rttMs: 0.2, bandwidthBps: 1e9, measuredAt: 3 },
    ],
  };
  t.same(placementStateFromTopology(view), {
    nodes: [
      {
        id: 'a',
        memory: { ramAvailable: 1, ramTotal: 2 },
        interfaces: [{ name: 'lan0', ip: '10.77.0.1', type: 'ethernet' }],
        device: { memoryBandwidthGBps: 5, gflops: 1 },
      },
      { id: 'b', interfaces: [] },
    ],
    links: [{ source: 'b', sink: 'a', ip: '10.77.0.1', type: 'ethernet', rttMs: 0.2, bandwidthBps: 1e9 }],
  });
});
