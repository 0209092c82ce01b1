/**
 * The pipeline step on a loopback ring: stages in ring order, every activation crosses every hop and arrives
 * bit for bit, rank 0 times the whole step; the step is at least the sum of the stages' own work.
 */
import t from 'tap';
import { timedPipeline } from '../../src/ring/timed-pipeline.js';
import { loopbackRing } from './fixtures/helpers.js';

t.test('three stages: activations verified on every rank, step ≥ the stages', async (t) => {
  const comms = await loopbackRing(3);
  t.teardown(() => Promise.all(comms.map((c) => c.close())));
  const layers = [2, 1, 3];
  const results = await Promise.all(
    comms.map((c, r) =>
      timedPipeline(c, {
        layers: layers[r] as number,
        bytesPerLayer: 1 << 20,
        flopsPerTokenPerLayer: 1 << 20,
        activationBytesPerToken: 4096,
        tokensPerStep: 2,
        steps: 5,
        warmup: 1,
      }),
    ),
  );
  for (const r of results) {
    t.equal(r.wrong, 0, `rank ${r.rank}: every word as sent`);
    t.equal(r.verifiedBytes, 6 * 8192, `rank ${r.rank}: checked every step's activation`);
    t.ok(r.stageMs > 0);
  }
  const head = results[0];
  t.ok(head?.stepMs !== null && (head?.stepMs as number) > 0);
  t.equal(results[1]?.stepMs, null, 'only rank 0 times the step');
  const stageSum = results.reduce((s, r) => s + r.stageMs, 0);
  t.ok((head?.stepMs as number) >= stageSum * 0.5, 'the step includes every stage');
  t.equal(head?.tokensPerS, Math.round((2 * 1000 * 1000) / (head?.stepMs as number)) / 1000);
});

t.test('a single stage needs no ring traffic', async (t) => {
  const [c] = await loopbackRing(1);
  t.teardown(() => c!.close());
  const r = await timedPipeline(c!, {
    layers: 1,
    bytesPerLayer: 65536,
    flopsPerTokenPerLayer: 0,
    activationBytesPerToken: 16,
    tokensPerStep: 1,
    steps: 2,
    warmup: 0,
  });
  t.equal(r.verifiedBytes, 0, 'nothing received: no ring traffic');
  t.equal(r.steps, 2);
  t.ok(typeof r.stepMs === 'number' && r.stepMs >= 0, `the one rank times the step (${r.stepMs} ms)`);
});
