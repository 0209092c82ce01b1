/**
 * One benchmark task on a connected communicator, timed the way nccl-tests times it (the live benchmark's ring
 * runner tasks use it): buffers allocated in the communicator's kernel memory and filled once, `warmup` untimed
 * ops, a barrier so every rank starts the timed loop together, then `iters` back-to-back ops with nothing else in
 * the loop (no fill, no check, no allocation); the mean is the loop's wall time / iters (nccl-tests), the median
 * and p99 come from each op's own time. Afterwards, outside the timing, the inputs are filled again, one more op
 * runs and every element is checked against the exact expected value (#wrong).
 */
import { performance } from 'node:perf_hooks';
import { TorusError } from '../protocols/errors.js';
import { DTYPE_BYTES, type Dtype, type ReduceOp, type RingArray } from '../native/kernels/index.js';
import { halfToNumber, numberToHalf } from '../native/kernels/float16.js';
import type { RingCommunicator } from './communicator.js';
import type { DirectionsOption } from './directions.js';

export type TimedOp = 'all-reduce' | 'all-gather' | 'broadcast' | 'send-recv';

export interface TimedParams {
  readonly op: TimedOp;
  /** elements per rank */
  readonly count: number;
  readonly dtype: Dtype;
  readonly reduce: ReduceOp;
  readonly root: number;
  readonly iters: number;
  readonly warmup: number;
  /** directions for this task only (restored afterwards); absent: the communicator's own */
  readonly bidirectional?: DirectionsOption;
}

export interface TimedResult {
  readonly op: TimedOp;
  readonly worldSize: number;
  readonly count: number;
  readonly dtype: Dtype;
  readonly bytes: number;
  readonly iters: number;
  readonly warmup: number;
  /** mean per op: the timed loop's wall time / iters (nccl-tests) */
  readonly timeUs: number;
  readonly medianUs: number;
  readonly p99Us: number;
  readonly minUs: number;
  /** GB/s (1e9 B) from the mean, as nccl-tests */
  readonly algbw: number;
  readonly busbw: number;
  /** busbw at the median op time */
  readonly busbwMedian: number;
  readonly wrong: number;
  /** both ring directions were in force */
  readonly bidirectional: boolean;
}

const value = (rank: number, i: number): number => (rank + 1) * ((i % 7) + 1);

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** nccl-tests' bus-bandwidth factor: 2(n−1)/n for all-reduce, (n−1)/n for all-gather, 1 otherwise. */
export function busFactor(op: TimedOp, n: number): number {
  return op === 'all-reduce' ? (2 * (n - 1)) / n : op === 'all-gather' ? (n - 1) / n : 1;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/** Runs one timed task; `signal` aborts the wait (the caller then closes the communicator: an op cannot stop half-way). */
export async function timedCollective(c: RingCommunicator, p: TimedParams, signal?: AbortSignal): Promise<TimedResult> {
  const n = c.worldSize,
    rank = c.rank;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal?.reason ?? new TorusError('TORUS_CHANNEL_CLOSED', 'task cancelled'));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  const wait = <T>(x: Promise<T>): Promise<T> => Promise.race([x, aborted]);
  const input = c.alloc(p.dtype, p.count);
  const output =
    p.op === 'all-gather' ? c.alloc(p.dtype, p.count * n) : p.op === 'send-recv' ? c.alloc(p.dtype, p.count) : input;
  const put = p.dtype === 'float16' ? numberToHalf : (x: number) => x;
  const get = p.dtype === 'float16' ? halfToNumber : (x: number) => x;
  const fill = (): void => {
    for (let i = 0; i < input.length; i++) input[i] = put(value(rank, i));
  };
  const once = (): Promise<RingArray> => {
    switch (p.op) {
      case 'all-reduce':
        return c.allReduce(input, p.reduce);
      case 'all-gather':
        return c.allGather(input, output);
      case 'broadcast':
        return c.broadcast(input, p.root);
      case 'send-recv':
        return c.sendRecv(input, output, 1);
    }
  };
  const expect = (i: number): number => {
    switch (p.op) {
      case 'all-reduce':
        return p.reduce === 'sum'
          ? ((n * (n + 1)) / 2) * ((i % 7) + 1)
          : p.reduce === 'max'
            ? value(n - 1, i)
            : value(0, i);
      case 'all-gather':
        return value(Math.floor(i / p.count), i % p.count);
      case 'broadcast':
        return value(p.root, i);
      case 'send-recv':
        return value((rank - 1 + n) % n, i);
    }
  };
  try {
    const bidirectional =
      p.bidirectional === undefined ? c.options.bidirectional : await wait(c.setDirections(p.bidirectional));
    fill();
    for (let i = 0; i < p.warmup; i++) await wait(once());
    await wait(c.barrier());
    const times: number[] = [];
    const start = performance.now();
    for (let i = 0; i < p.iters; i++) {
      const t0 = performance.now();
      await wait(once());
      times.push((performance.now() - t0) * 1000);
    }
    const meanUs = ((performance.now() - start) * 1000) / p.iters;
    fill();
    const result = await wait(once());
    let wrong = 0;
    for (let i = 0; i < result.length; i++) if (get(result[i]!) !== expect(i)) wrong += 1;
    times.sort((a, b) => a - b);
    // nccl-tests sizes all-gather by its whole output (n × count), the other collectives by their buffer.
    const bytes = p.count * DTYPE_BYTES[p.dtype] * (p.op === 'all-gather' ? n : 1);
    const medianUs = percentile(times, 50);
    const algbw = bytes / (meanUs * 1000);
    return {
      op: p.op,
      worldSize: n,
      count: p.count,
      dtype: p.dtype,
      bytes,
      iters: p.iters,
      warmup: p.warmup,
      timeUs: round1(meanUs),
      medianUs: round1(medianUs),
      p99Us: round1(percentile(times, 99)),
      minUs: round1(times[0] ?? 0),
      algbw,
      busbw: algbw * busFactor(p.op, n),
      busbwMedian: medianUs > 0 ? (bytes / (medianUs * 1000)) * busFactor(p.op, n) : 0,
      wrong,
      bidirectional,
    };
  } finally {
    signal?.removeEventListener('abort', onAbort!);
    // After an abort the op may still be writing into the buffers: they go with the communicator (closed by the caller).
    if (!c.error && !signal?.aborted) {
      c.free(input);
      if (output !== input) c.free(output);
      if (p.bidirectional !== undefined && !signal?.aborted) await c.setDirections('auto').catch(() => undefined);
    }
  }
}
