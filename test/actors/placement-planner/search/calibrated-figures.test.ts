// The cost model's calibrated shape (docs/placement.md, "Calibrated figures"): per-layer overhead + memory +
// compute with a framework's figures, attention's KV reads and FLOPs when the context is named, and the planner
// choosing by calibrated figures over device figures; without a framework nothing changes.
import t from 'tap';
import { indexCluster } from '../../../../src/actors/placement-planner/search/cluster-index.js';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { layerMs, predictPipeline } from '../../../../src/actors/placement-planner/search/cost-model.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal, type Plan } from '../../../../src/actors/placement-planner/search/plan-result.js';
import { both, GB, makeState, request, type StateJson } from '../../../fixtures/placement/build-state.js';

const AT = Date.UTC(2026, 11, 7, 20, 0, 0);
const torch = (memoryBandwidthGBps: number, gflops: number, layerOverheadMs: number) => ({
  torch: { memoryBandwidthGBps, gflops, layerOverheadMs, measuredAt: AT },
});

/** a: device 100 GB/s, 1000 GFLOP/s, torch 10 GB/s, 100 GFLOP/s, 0.5 ms/layer; b: device 50 GB/s, 100 GFLOP/s, none. */
function pair(): StateJson {
  const s = makeState([
    { id: 'a', mem: 100 * GB },
    { id: 'b', mem: 100 * GB },
  ]);
  Object.assign(s.nodes[0] as object, {
    device: { memoryBandwidthGBps: 100, gflops: 1000 },
    calibrations: torch(10, 100, 0.5),
  });
  Object.assign(s.nodes[1] as object, { device: { memoryBandwidthGBps: 50, gflops: 100 } });
  both(s, 'a', 'b', 'ethernet', { bw: 1e9, rtt: 2 });
  return s;
}

const workload = (over: Record<string, unknown> = {}) =>
  decodePlacementRequest(request({}, { memoryBytes: 10 * GB, layers: 10, hiddenSize: 4096, ...over })).workload;

t.test('calibrated decode: overhead + weights / bandwidth + FLOPs / gflops (hand-worked)', async (t) => {
  const index = indexCluster(decodePlacementInput(pair()), 'ring');
  // 0.5 + 1e9 B / 10e9 B/s (100 ms) + 2e9 FLOP / 100e9 FLOP/s (20 ms) = 120.5 ms
  t.equal(layerMs(index, 0, workload({ framework: 'torch' })), 120.5);
  // without the framework: the device figures, max(1e9 / 100e9, 2e9 / 1000e9) = 10 ms, as before
  t.equal(layerMs(index, 0, workload()), 10);
  // b has no torch figures: its device figures, max(20, 20) = 20 ms
  t.equal(layerMs(index, 1, workload({ framework: 'torch' })), 20);
});

t.test('decode over a KV cache: its reads grow with the context, attention adds FLOPs (hand-worked)', async (t) => {
  const index = indexCluster(decodePlacementInput(pair()), 'ring');
  // KV per position 4096 × 4 = 16384 B; 1000 + 1 positions → 16,400,384 B: (1e9 + 16,400,384) / 10e9 = 101.6400384 ms
  // attention 4 × 4096 × (1 × 1000 + 1) = 16,400,384 FLOP: (2e9 + 16,400,384) / 100e9 = 20.16400384 ms; + 0.5
  t.equal(layerMs(index, 0, workload({ framework: 'torch', contextTokens: 1000 })), 0.5 + 101.6400384 + 20.16400384);
  // twice the context reads about twice the KV bytes: the step is slower
  const longer = layerMs(index, 0, workload({ framework: 'torch', contextTokens: 2000 })) as number;
  t.equal(
    Math.round(longer * 1e6) / 1e6,
    Math.round((0.5 + (1e9 + 16384 * 2001) / 1e7 + (2e9 + 16384 * 2001) / 1e8) * 1e6) / 1e6,
  );
  // kvBytesPerTokenPerLayer given (grouped-query attention): 1024 B per position
  t.equal(
    layerMs(index, 0, workload({ framework: 'torch', contextTokens: 1000, kvBytesPerTokenPerLayer: 1024 })),
    0.5 + (1e9 + 1024 * 1001) / 1e7 + 20.16400384,
  );
  // device figures (max) also see the KV reads: max((1e9 + 16,400,384) / 100e9, (2e9 + 16,400,384) / 1000e9)
  t.equal(layerMs(index, 0, workload({ contextTokens: 1000 })), 10.16400384);
});

t.test(
  'prefill: N tokens over the same weights is compute-bound, attention is quadratic in N (hand-worked)',
  async (t) => {
    const index = indexCluster(decodePlacementInput(pair()), 'ring');
    // 100 tokens from an empty cache: KV 16384 × 100 = 1,638,400 B → (1e9 + 1,638,400) / 10e9 = 100.16384 ms;
    // FLOPs 2e9 × 100 + 4 × 4096 × (100 × 101 / 2) = 200,082,739,200 → 2000.827392 ms; + 0.5 ms
    const ms = layerMs(index, 0, workload({ framework: 'torch', tokensPerStep: 100, contextTokens: 0 })) as number;
    t.equal(Math.round(ms * 1e6) / 1e6, 2101.491232);
    // the pipeline: 10 layers on a alone
    const p = predictPipeline(
      index,
      [0],
      [10],
      workload({ framework: 'torch', tokensPerStep: 100, contextTokens: 0 }),
      'latency',
    );
    t.equal(p.stepMs, Math.round(ms * 10 * 1e6) / 1e6);
    t.same(p.figures, { a: 'torch calibration 2026-12-07T20:00:00.000Z' });
  },
);

t.test('the prediction names the figures each node used; none without a framework', async (t) => {
  const index = indexCluster(decodePlacementInput(pair()), 'ring');
  const p = predictPipeline(index, [0, 1], [6, 4], workload({ framework: 'torch' }), 'latency');
  t.same(p.figures, { a: 'torch calibration 2026-12-07T20:00:00.000Z', b: 'torus kernels' });
  // a: 6 × 120.5 = 723 ms; b: 4 × 20 = 80 ms; hops 1.065536 ms each way
  t.same(
    p.breakdown.map((e) => e.ms),
    [723, 1.065536, 80, 1.065536],
  );
  t.equal(predictPipeline(index, [0, 1], [6, 4], workload(), 'latency').figures, undefined);
  // a framework nobody calibrated: every node by its device figures, and said so
  t.same(predictPipeline(index, [0, 1], [6, 4], workload({ framework: 'jax' }), 'latency').figures, {
    a: 'torus kernels',
    b: 'torus kernels',
  });
});

t.test('the planner chooses by calibrated figures over device figures', async (t) => {
  // a and b each hold the model alone; by device figures a is twice b's speed, by torch figures b is 4× a's.
  const s = makeState([
    { id: 'a', mem: 100 * GB },
    { id: 'b', mem: 100 * GB },
  ]);
  Object.assign(s.nodes[0] as object, {
    device: { memoryBandwidthGBps: 100, gflops: 1000 },
    calibrations: torch(5, 50, 1),
  });
  Object.assign(s.nodes[1] as object, {
    device: { memoryBandwidthGBps: 50, gflops: 500 },
    calibrations: torch(20, 200, 1),
  });
  both(s, 'a', 'b', 'ethernet', { bw: 1e8, rtt: 20 });
  const plan = (framework?: string): Plan => {
    const w = { memoryBytes: 10 * GB, layers: 10, hiddenSize: 4096, ...(framework ? { framework } : {}) };
    const result = planPlacement(decodePlacementInput(s), decodePlacementRequest(request({}, w)), { seed: 7 });
    if (isRefusal(result)) throw new Error(result.refusal.message);
    return result as Plan;
  };
  t.same(plan().instance.nodes, ['a'], 'device figures: a');
  const byTorch = plan('torch');
  t.same(byTorch.instance.nodes, ['b'], 'torch figures: b');
  t.same(byTorch.predicted.figures, { b: 'torch calibration 2026-12-07T20:00:00.000Z' });
});

t.test('calibrations in the planner state are checked strictly', async (t) => {
  const s = pair();
  (s.nodes[0] as Record<string, unknown>).calibrations = {
    torch: { gflops: -1, memoryBandwidthGBps: 1, layerOverheadMs: 0, measuredAt: 0 },
  };
  t.throws(() => decodePlacementInput(s), /calibrations/);
  t.throws(() => decodePlacementRequest(request({}, { framework: 'Not A Name' })), /framework/);
});
