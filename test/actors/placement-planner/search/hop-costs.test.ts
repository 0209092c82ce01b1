// A pipeline hop's price (docs/placement.md, "Predicted step time"): the link it really takes plus the framework's
// own hop overhead. A framework job's ranks dial each other's mesh address (torch's full mesh), so its hops are
// priced over those links, not the ring cables; torus's own ring keeps the ring addresses. Hand-worked cases.
import t from 'tap';
import { indexCluster } from '../../../../src/actors/placement-planner/search/cluster-index.js';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { hopMs, hopOverheadMs, predictPipeline } from '../../../../src/actors/placement-planner/search/cost-model.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { both, GB, makeState, request, type StateJson } from '../../../fixtures/placement/build-state.js';

const AT = Date.UTC(2026, 11, 7, 20, 0, 0);
const torch = (hopOverheadMs?: number) => ({
  torch: {
    memoryBandwidthGBps: 10,
    gflops: 100,
    layerOverheadMs: 0.5,
    ...(hopOverheadMs !== undefined ? { hopOverheadMs } : {}),
    measuredAt: AT,
  },
});

/** a, b, c: calibrated with hop overheads 1, 3 and none (an older calibration); 1 Gbit/s, 2 ms RTT between all. */
function trio(): StateJson {
  const s = makeState([
    { id: 'a', mem: 100 * GB },
    { id: 'b', mem: 100 * GB },
    { id: 'c', mem: 100 * GB },
  ]);
  const hops = [1, 3, undefined];
  s.nodes.forEach((n, i) => {
    Object.assign(n, { device: { memoryBandwidthGBps: 100, gflops: 1000 }, calibrations: torch(hops[i]) });
  });
  both(s, 'a', 'b', 'ethernet', { bw: 1e9, rtt: 2 });
  both(s, 'b', 'c', 'ethernet', { bw: 1e9, rtt: 2 });
  both(s, 'a', 'c', 'ethernet', { bw: 1e9, rtt: 2 });
  return s;
}

const workload = (over: Record<string, unknown> = {}) =>
  decodePlacementRequest(request({}, { memoryBytes: 10 * GB, layers: 10, hiddenSize: 4096, ...over })).workload;

t.test('a hop adds the mean of its two ends’ calibrated hop overheads (hand-worked)', async (t) => {
  const index = indexCluster(decodePlacementInput(trio()), 'ring');
  const w = workload({ framework: 'torch' });
  // a (1 ms) → b (3 ms): (1 + 3) / 2 = 2 ms; b → c (none: 0): 1.5 ms; a device-figured end counts 0 as well
  t.equal(hopOverheadMs(index, 0, 1, w), 2);
  t.equal(hopOverheadMs(index, 1, 2, w), 1.5);
  // the link: RTT 2 ms / 2 + 4096 × 2 B × 8 / 1e9 bit/s = 1 + 0.065536 ms; + 2 ms of overhead
  t.equal(hopMs(index, 0, 1, w), 3.065536);
  // without the framework (device figures) nothing is added, as before
  t.equal(hopOverheadMs(index, 0, 1, workload()), 0);
  t.equal(hopMs(index, 0, 1, workload()), 1.065536);
  // the return hop carries returnBytesPerStep (8 B: 64 bit at 1 Gbit/s = 0.000064 ms) and pays the overhead too
  const p = predictPipeline(
    index,
    [0, 1, 2],
    [4, 3, 3],
    workload({ framework: 'torch', returnBytesPerStep: 8 }),
    'latency',
  );
  t.same(
    p.breakdown.filter((e) => e.hop).map((e) => [e.hop, e.ms]),
    [
      ['a→b', 3.065536],
      ['b→c', 2.565536],
      ['c→a', 1 + 0.000064 + 0.5],
    ],
  );
});

const IDS = ['a', 'b', 'c', 'd'];
const lanIp = (i: number): string => `10.77.9.${i + 1}`;

/** a..d on a 100 Mbit/s LAN (RTT 1 ms) and a 10 Gbit/s cable (RTT 0.2 ms) between ring neighbours a–b–c–d–a. */
function cableRing(): StateJson {
  const s = makeState(IDS.map((id) => ({ id, mem: 100 * GB })));
  s.nodes.forEach((n, i) => {
    Object.assign(n, {
      device: { memoryBandwidthGBps: 100, gflops: 1000 },
      interfaces: [{ name: 'lan0', ip: lanIp(i), type: 'ethernet' }],
    });
  });
  IDS.forEach((source, i) =>
    IDS.forEach((sink, k) => {
      if (i !== k) s.links.push({ source, sink, ip: lanIp(k), bandwidthBps: 1e8, rttMs: 1 });
    }),
  );
  IDS.forEach((x, i) => {
    const j = (i + 1) % 4;
    const y = IDS[j] as string;
    const xIp = `10.77.${20 + i}.1`,
      yIp = `10.77.${20 + i}.2`;
    (s.nodes[i]!.interfaces as unknown[]).push({ name: `tb-${y}`, ip: xIp, type: 'thunderbolt' });
    (s.nodes[j]!.interfaces as unknown[]).push({ name: `tb-${x}`, ip: yIp, type: 'thunderbolt' });
    s.links.push(
      { source: x, sink: y, ip: yIp, bandwidthBps: 1e10, rttMs: 0.2 },
      { source: y, sink: x, ip: xIp, bandwidthBps: 1e10, rttMs: 0.2 },
    );
  });
  return s;
}

t.test('a framework job’s hops are priced over the mesh addresses its ranks dial (hand-worked)', async (t) => {
  const index = indexCluster(decodePlacementInput(cableRing()), 'ring');
  const order = [0, 1, 2, 3];
  // 1000 tokens × 4096 × 2 B = 8,192,000 B a hop (the last one too: no returnBytesPerStep)
  const prefill = (framework?: string) => workload({ tokensPerStep: 1000, ...(framework ? { framework } : {}) });
  const hops = (framework?: string) =>
    predictPipeline(index, order, [3, 3, 2, 2], prefill(framework), 'latency')
      .breakdown.filter((e) => e.hop)
      .map((e) => e.ms);
  // torus's ring: each hop on its cable, 0.1 + 65,536,000 bit / 1e10 bit/s = 0.1 + 6.5536 ms
  t.same(hops(), [6.6536, 6.6536, 6.6536, 6.6536]);
  // torch (no calibration here: no hop overhead): the cables reach only the two neighbours, so every rank's mesh
  // address is its LAN address: 0.5 + 65,536,000 / 1e8 = 0.5 + 655.36 ms a hop
  t.same(hops('torch'), [655.86, 655.86, 655.86, 655.86]);
});

t.test('with two or three ranks the mesh is the ring: a framework job is priced as before', async (t) => {
  const index = indexCluster(decodePlacementInput(cableRing()), 'ring');
  // a–b: both ends reach each other's cable address, so it is their mesh address (the ring's own choice)
  const w = workload({ tokensPerStep: 1000, framework: 'torch' });
  const p = predictPipeline(index, [0, 1], [5, 5], w, 'latency');
  t.same(
    p.breakdown.filter((e) => e.hop).map((e) => e.ms),
    [6.6536, 6.6536],
  );
});
