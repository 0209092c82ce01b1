/**
 * exo's rule as the placement-quality benchmark prices it (benchmarks/placement-quality/exo-rule.ts): exo picks the
 * set by size and memory, and its addresses by interface label, never by measurement; the price is torus's cost
 * model over the links exo dials.
 */
import t from 'tap';
import { decodePlacementInput } from '../../../src/actors/placement-planner/search/placement-input.js';
import { predictionScore } from '../../../src/actors/placement-planner/search/cost-model.js';
import { decodePlacementRequest } from '../../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal } from '../../../src/actors/placement-planner/search/plan-result.js';
import { exoRule, priceExoChoice } from '../../../benchmarks/placement-quality/exo-rule.js';

const GB = 1e9;
const device = { memoryBandwidthGBps: 400, gflops: 10000 };
const node = (id: string, memoryGB: number, interfaces: { name: string; ip: string; type: string }[]) => ({
  id,
  memory: { ramAvailable: memoryGB * GB, ramTotal: memoryGB * GB },
  interfaces,
  device,
});
const link = (source: string, sink: string, ip: string, gbit: number) => ({
  source,
  sink,
  ip,
  bandwidthBps: gbit * 1e9,
  rttMs: 0.2,
});
const request = (memoryGB: number) =>
  decodePlacementRequest({
    workload: { id: 'm', memoryBytes: memoryGB * GB, layers: 40, hiddenSize: 8192 },
    sharding: 'pipeline',
    backend: 'ring',
  });

// a and b: 10 Gbit/s on an interface labelled wifi, 0.3 Gbit/s on one labelled ethernet. The labels lie; exo
// believes them, torus measures.
const mislabelled = {
  nodes: [
    node('a', 40, [
      { name: 'en0', ip: '10.77.0.1', type: 'ethernet' },
      { name: 'wl0', ip: '10.77.1.1', type: 'wifi' },
    ]),
    node('b', 40, [
      { name: 'en0', ip: '10.77.0.2', type: 'ethernet' },
      { name: 'wl0', ip: '10.77.1.2', type: 'wifi' },
    ]),
  ],
  links: [
    link('a', 'b', '10.77.1.2', 10),
    link('a', 'b', '10.77.0.2', 0.3),
    link('b', 'a', '10.77.1.1', 10),
    link('b', 'a', '10.77.0.1', 0.3),
  ],
};

t.test('exo dials the address its label ranks best, whatever was measured', async (t) => {
  const answer = exoRule(decodePlacementInput(mislabelled), request(70));
  if (!('choice' in answer)) throw new Error(answer.refusal);
  t.same(answer.choice.nodes, ['a', 'b']);
  t.same(
    answer.choice.dials.map((l) => `${l.source}→${l.sink} ${l.ip}`),
    ['a→b 10.77.0.2', 'b→a 10.77.0.1'],
    'the ethernet-labelled addresses, not the 10 Gbit/s ones',
  );
  // torus's planner on the same state takes the measured 10 Gbit/s link; exo's price is the 0.3 Gbit/s one.
  const plan = planPlacement(decodePlacementInput(mislabelled), request(70), { seed: 1 });
  if (isRefusal(plan)) throw new Error(plan.refusal.message);
  t.equal(plan.instance.hostsByNode?.a?.[1]?.ip, '10.77.1.2');
  const torus = predictionScore(plan.predicted) as number;
  const exo = priceExoChoice(mislabelled, request(70), answer.choice) as number;
  // per hop 8192 × 2 bytes × 8 bits: 0.013 ms at 10 Gbit/s, 0.437 ms at 0.3 Gbit/s
  t.equal(+(exo - torus).toFixed(3), +(2 * (16384 * 8 * (1 / 0.3e9 - 1 / 10e9)) * 1e3).toFixed(3));
});

t.test('exo takes the smallest size, then the most memory: not the best network', async (t) => {
  // a–b on thunderbolt, c (more memory) on wifi to both; every pair holds 70 GB, no node alone does.
  const ifs = (i: number) => [
    { name: 'tb0', ip: `10.77.9.${i}`, type: 'thunderbolt' },
    { name: 'wl0', ip: `10.77.1.${i}`, type: 'wifi' },
  ];
  const state = {
    nodes: [node('a', 40, ifs(1)), node('b', 40, ifs(2)), node('c', 50, ifs(3)), node('d', 10, ifs(4))],
    links: [
      link('a', 'b', '10.77.9.2', 40),
      link('b', 'a', '10.77.9.1', 40),
      ...['a', 'b', 'd'].flatMap((x, i) => [
        link(x, 'c', '10.77.1.3', 0.3),
        link('c', x, `10.77.1.${[1, 2, 4][i]}`, 0.3),
      ]),
    ],
  };
  const answer = exoRule(decodePlacementInput(state), request(70));
  if (!('choice' in answer)) throw new Error(answer.refusal);
  t.same(answer.choice.nodes, ['a', 'c'], 'a size-2 set with the most memory (90 GB), first in node order');
  t.same(answer.choice.layers, [18, 22], 'layers by memory');
  const plan = planPlacement(decodePlacementInput(state), request(70), { seed: 1 });
  if (isRefusal(plan)) throw new Error(plan.refusal.message);
  t.same([...plan.instance.nodes].sort(), ['a', 'b'], "torus's planner takes the thunderbolt pair");
  t.ok((priceExoChoice(state, request(70), answer.choice) as number) > (predictionScore(plan.predicted) as number));
  t.same(
    exoRule(decodePlacementInput(state), request(30)),
    {
      choice: { nodes: ['c'], layers: [40], dials: [] },
    },
    'one node when one node holds it',
  );
  t.same(exoRule(decodePlacementInput(state), request(200)), { refusal: 'no set holds the workload' });
  // d becomes a leaf holding 70 GB with c: exo prefers a set with a leaf, then fails the per-node check there.
  const withLeaf = { ...state, nodes: state.nodes.map((n) => (n.id === 'd' ? node('d', 20, ifs(4)) : n)) };
  t.same(exoRule(decodePlacementInput(withLeaf), request(70)), { refusal: 'node c lacks memory for its 29 layers' });
});
