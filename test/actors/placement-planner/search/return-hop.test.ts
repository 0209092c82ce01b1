// The pipeline's hop back to rank 0 (docs/placement.md, "Predicted step time"): a model pipeline sends only the
// sampled token back, so `returnBytesPerStep` prices that hop with its bytes; without it every hop carries the
// step's activations, as before (the `pipeline` workload and exo's vectors keep their answers).
import t from 'tap';
import { indexCluster } from '../../../../src/actors/placement-planner/search/cluster-index.js';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import { predictPipeline } from '../../../../src/actors/placement-planner/search/cost-model.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { ValidationError } from '../../../../src/protocols/errors.js';
import { both, GB, makeState, request } from '../../../fixtures/placement/build-state.js';

/** a and b: 100 GB/s, 1000 GFLOP/s; a 10 Mbit/s link with a 2 ms RTT each way. */
function pairIndex() {
  const s = makeState([
    { id: 'a', mem: 100 * GB },
    { id: 'b', mem: 100 * GB },
  ]);
  for (const n of s.nodes) Object.assign(n as object, { device: { memoryBandwidthGBps: 100, gflops: 1000 } });
  both(s, 'a', 'b', 'ethernet', { bw: 10e6, rtt: 2 });
  return indexCluster(decodePlacementInput(s), 'ring');
}

// 10 layers of 1e9 B; hidden 4096 → 8192 B of activation per token; a prefill of 32 tokens.
const workload = (over: Record<string, unknown> = {}) =>
  decodePlacementRequest(
    request({}, { memoryBytes: 10 * GB, layers: 10, hiddenSize: 4096, tokensPerStep: 32, ...over }),
  ).workload;

t.test('the return hop carries returnBytesPerStep (hand-worked)', async (t) => {
  const index = pairIndex();
  const p = predictPipeline(index, [0, 1], [5, 5], workload({ returnBytesPerStep: 8 }), 'latency');
  // stages: max(1e9 / 100e9, 2e9 × 32 / 1000e9) = 64 ms per layer × 5 = 320 ms each
  // a→b: 1 ms + 32 × 8192 × 8 / 10e6 s = 1 + 209.7152 ms; b→a: 1 ms + 8 × 8 / 10e6 s = 1 + 0.0064 ms
  t.same(
    p.breakdown.map((b) => b.ms),
    [320, 210.7152, 320, 1.0064],
  );
  t.equal(p.stepMs, 320 + 210.7152 + 320 + 1.0064);
  t.equal(p.periodMs, 320, 'the slowest part is a stage, no longer the return hop');
});

t.test('without returnBytesPerStep the return hop carries the activations, as before', async (t) => {
  const p = predictPipeline(pairIndex(), [0, 1], [5, 5], workload(), 'latency');
  t.same(
    p.breakdown.map((b) => b.ms),
    [320, 210.7152, 320, 210.7152],
  );
});

t.test('returnBytesPerStep alone prices the return hop; other hops still need the activation', async (t) => {
  const p = predictPipeline(
    pairIndex(),
    [0, 1],
    [5, 5],
    decodePlacementRequest(request({}, { memoryBytes: 10 * GB, layers: 10, returnBytesPerStep: 8 })).workload,
    'latency',
  );
  t.equal(p.stepMs, null);
  t.same(p.unmeasured, ['workload: activationBytesPerToken (or hiddenSize)']);
});

t.test('a bad returnBytesPerStep is refused', async (t) => {
  for (const bad of [-1, 1.5, 'eight'])
    t.throws(
      () => decodePlacementRequest(request({}, { memoryBytes: GB, layers: 2, returnBytesPerStep: bad })),
      ValidationError,
      String(bad),
    );
});
