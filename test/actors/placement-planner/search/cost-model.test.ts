import t from 'tap';
import { indexCluster } from '../../../../src/actors/placement-planner/search/cluster-index.js';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { predictPipeline, predictTensor } from '../../../../src/actors/placement-planner/search/cost-model.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { both, GB, makeState, request, type StateJson } from '../../../fixtures/placement/build-state.js';

/** Two nodes: a reads memory at 100 GB/s and computes 1000 GFLOP/s, b at 50 GB/s and 100 GFLOP/s. */
function pair(): StateJson {
  const s = makeState([
    { id: 'a', mem: 100 * GB },
    { id: 'b', mem: 100 * GB },
  ]);
  (s.nodes[0] as Record<string, unknown>).device = { memoryBandwidthGBps: 100, gflops: 1000 };
  (s.nodes[1] as Record<string, unknown>).device = { memoryBandwidthGBps: 50, gflops: 100 };
  // 1 Gbit/s, 2 ms RTT both ways
  both(s, 'a', 'b', 'ethernet', { bw: 1e9, rtt: 2 });
  return s;
}

const workload = (over: Record<string, unknown> = {}) =>
  decodePlacementRequest(request({}, { memoryBytes: 10 * GB, layers: 10, hiddenSize: 4096, ...over })).workload;

t.test('defaults: bytesPerLayer = memoryBytes / layers, FLOPs = 2 × bytes, activation = hiddenSize × 2', async (t) => {
  const w = workload();
  t.equal(w.bytesPerLayer, 1e9);
  t.equal(w.flopsPerTokenPerLayer, 2e9);
  t.equal(w.activationBytesPerToken, 8192);
  t.equal(w.tokensPerStep, 1);
  t.equal(decodePlacementRequest(request()).objective, 'latency');
  t.equal(decodePlacementRequest(request({}, { layers: 4 })).workload.activationBytesPerToken, undefined);
});

t.test('pipeline, decode: memory-bound stages plus RTT/2 and activation per hop (hand-worked)', async (t) => {
  const index = indexCluster(decodePlacementInput(pair()), 'ring');
  // Stage a: 6 layers × max(1e9 B / 100e9 B/s = 10 ms, 2e9 FLOP / 1000e9 = 2 ms) = 60 ms.
  // Stage b: 4 layers × max(1e9 / 50e9 = 20 ms, 2e9 / 100e9 = 20 ms) = 80 ms.
  // Hop: 1 ms + 8192 B × 8 / 1e9 b/s = 0.065536 ms → 1.065536 ms, twice (a→b and b→a).
  const p = predictPipeline(index, [0, 1], [6, 4], workload(), 'latency');
  t.same(p.unmeasured, []);
  t.same(p.breakdown, [
    { stage: 'a', ms: 60 },
    { hop: 'a→b', ms: 1.065536 },
    { stage: 'b', ms: 80 },
    { hop: 'b→a', ms: 1.065536 },
  ]);
  t.equal(p.stepMs, 142.131072);
  t.equal(p.tokensPerS, Math.round((1e3 / 142.131072) * 1e6) / 1e6);
  // Throughput (pipeline full): the slowest stage, b's 80 ms, sets the pace → 12.5 tokens/s.
  t.equal(predictPipeline(index, [0, 1], [6, 4], workload(), 'throughput').tokensPerS, 12.5);
});

t.test('pipeline, prefill of 100 tokens: compute-bound, activation scales with tokens', async (t) => {
  const index = indexCluster(decodePlacementInput(pair()), 'ring');
  // a: 6 × max(10 ms, 100 × 2e9 / 1e12 = 200 ms) = 1200 ms; b: 4 × max(20, 100 × 2e9 / 1e11 = 2000) = 8000 ms.
  // hop: 1 + 100 × 8192 × 8 / 1e9 × 1e3 = 1 + 6.5536 = 7.5536 ms, twice.
  const p = predictPipeline(index, [0, 1], [6, 4], workload({ tokensPerStep: 100 }), 'latency');
  t.equal(p.stepMs, 9215.1072);
  t.equal(p.tokensPerS, Math.round((100e3 / 9215.1072) * 1e6) / 1e6);
});

t.test('tensor: slowest share per layer plus two all-reduces per layer (hand-worked)', async (t) => {
  const index = indexCluster(decodePlacementInput(pair()), 'ring');
  // Share of a layer: a max(0.5e9/100e9 = 5 ms, 1e9/1e12 = 1 ms) = 5; b max(0.5e9/50e9 = 10, 1e9/1e11 = 10) = 10.
  // All-reduce of 8192 B on 2 nodes: 2·1/2 × 8192 × 8 / 1e9 s = 0.065536 ms + 1 × 1 ms = 1.065536 ms.
  // Step: 10 layers × (10 + 2 × 1.065536) = 121.31072 ms.
  const p = predictTensor(index, [0, 1], workload(), 'latency');
  t.equal(p.stepMs, 121.31072);
  t.same(p.breakdown, [
    { stage: 'a', ms: 50 },
    { stage: 'b', ms: 100 },
    { hop: 'all-reduce', ms: 21.31072 },
  ]);
});

t.test('unmeasured inputs are named and make the totals null', async (t) => {
  const s = pair();
  delete (s.nodes[1] as Record<string, unknown>).device;
  for (const l of s.links) if (l.source === 'b') delete l.bandwidthBps;
  const index = indexCluster(decodePlacementInput(s), 'ring');
  const p = predictPipeline(index, [0, 1], [6, 4], workload(), 'latency');
  t.equal(p.stepMs, null);
  t.equal(p.tokensPerS, null);
  t.same(p.unmeasured, ['b: memory bandwidth', 'b: gflops', 'b→a: bandwidth']);
  const noActivation = predictPipeline(index, [0, 1], [6, 4], workload({ hiddenSize: undefined }), 'latency');
  t.ok(noActivation.unmeasured.includes('workload: activationBytesPerToken (or hiddenSize)'));
});
