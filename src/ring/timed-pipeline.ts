/**
 * A pipeline-parallel step on a connected ring, doing the work the placement's cost model prices: each rank is a
 * stage holding its layers' weight bytes; per step it streams them and runs its FLOPs (src/native/device-speed.ts
 * StageWork), then sends the step's activation to the next rank over the ring's planned address; the last rank
 * sends it back to rank 0, which closes the step. Every rank checks the activation it receives bit for bit.
 */
import { TorusError } from '../protocols/errors.js';
import { StageWork } from '../native/device-speed.js';
import type { RingCommunicator } from './communicator.js';
import { percentile } from './timed-collective.js';

export interface PipelineParams {
  /** this rank's layer count */
  readonly layers: number;
  readonly bytesPerLayer: number;
  readonly flopsPerTokenPerLayer: number;
  readonly activationBytesPerToken: number;
  readonly tokensPerStep: number;
  readonly steps: number;
  readonly warmup: number;
}

export interface PipelineResult {
  readonly rank: number;
  readonly worldSize: number;
  /** rank 0: the median time of a whole step (every stage and hop), ms; other ranks: null */
  readonly stepMs: number | null;
  readonly tokensPerS: number | null;
  /** this stage's own work per step (weights + FLOPs), median ms */
  readonly stageMs: number;
  readonly steps: number;
  readonly activationBytes: number;
  /** activation bytes this rank received and checked */
  readonly verifiedBytes: number;
  /** int32 words that differed from what the previous stage sent */
  readonly wrong: number;
}

/** Word i of step s's activation: what rank 0 sends and every stage must receive and pass on unchanged. */
const word = (step: number, i: number): number => (Math.imul(step + 1, 0x9e3779b1) ^ i) | 0;

export async function timedPipeline(
  comm: RingCommunicator,
  p: PipelineParams,
  signal?: AbortSignal,
): Promise<PipelineResult> {
  const n = comm.worldSize;
  const rank = comm.rank;
  if (p.layers < 1) throw new TorusError('TORUS_API_VALIDATION', 'pipeline task: this rank holds no layer');
  const work = new StageWork(p.layers * p.bytesPerLayer);
  const flops = p.layers * p.flopsPerTokenPerLayer * p.tokensPerStep;
  const activationBytes = p.activationBytesPerToken * p.tokensPerStep;
  const words = Math.max(1, Math.ceil(activationBytes / 4));
  const act = comm.alloc('int32', words);
  const steps: number[] = [];
  const stages: number[] = [];
  let verified = 0,
    wrong = 0;
  const check = (step: number): void => {
    for (let i = 0; i < words; i++) if (act[i] !== word(step, i)) wrong++;
    verified += words * 4;
  };
  try {
    await comm.barrier();
    for (let s = 0; s < p.warmup + p.steps; s++) {
      signal?.throwIfAborted();
      const timed = s >= p.warmup;
      const t0 = performance.now();
      if (rank === 0) {
        const w0 = performance.now();
        work.run(flops);
        if (timed) stages.push(performance.now() - w0);
        if (n > 1) {
          for (let i = 0; i < words; i++) act[i] = word(s, i);
          await comm.send(act, 1);
          act.fill(0);
          await comm.recv(act, n - 1);
          check(s);
        }
        if (timed) steps.push(performance.now() - t0);
      } else {
        act.fill(0);
        await comm.recv(act, rank - 1);
        check(s);
        const w0 = performance.now();
        work.run(flops);
        if (timed) stages.push(performance.now() - w0);
        await comm.send(act, (rank + 1) % n);
      }
    }
  } finally {
    comm.free(act);
  }
  const round = (x: number): number => Math.round(x * 1000) / 1000;
  const median = (xs: number[]): number =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const stepMs = rank === 0 ? round(median(steps)) : null;
  return {
    rank,
    worldSize: n,
    stepMs,
    tokensPerS: stepMs !== null && stepMs > 0 ? round((p.tokensPerStep * 1000) / stepMs) : null,
    stageMs: round(median(stages)),
    steps: p.steps,
    activationBytes,
    verifiedBytes: verified,
    wrong,
  };
}
