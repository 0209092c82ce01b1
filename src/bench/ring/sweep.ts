/**
 * The per-rank half of the benchmark: for each op and size, warm up, time `iters` back-to-back ops,
 * then (with check) re-run once on exact inputs and count wrong elements. Every rank runs the same
 * sweep; the orchestrator averages times over ranks and sums #wrong (nccl-tests -a 1, -c 1).
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { DTYPE_BYTES, type Dtype, type ReduceOp, type RingArray } from '../../native/kernels/index.js';
import { numberToHalf } from '../../native/kernels/float16.js';
import type { RingCommunicator } from '../../ring/communicator.js';
import type { BenchOp } from './table.js';

export interface SweepConfig {
  readonly ops: readonly BenchOp[];
  readonly sizes: readonly number[];
  readonly warmup: number;
  readonly iters: number;
  readonly check: boolean;
  readonly dtype: Dtype;
  readonly redop: ReduceOp;
  readonly root: number;
}

export interface RankResult {
  readonly op: BenchOp;
  readonly bytes: number;
  readonly count: number;
  readonly meanUs: number;
  readonly medianUs: number;
  /** Process CPU time (user + system) per timed op, µs: cpuUs / meanUs near 1 means the rank is CPU-bound. */
  readonly cpuUs?: number;
  /** The system (kernel) part of cpuUs: socket copies and TCP. */
  readonly sysUs?: number;
  /** Time per timed op the main thread spent runnable but waiting for a CPU (Linux schedstat), µs. */
  readonly runWaitUs?: number;
  readonly wrong: number | null;
}

/** Cumulative run-queue wait of this thread (µs) from /proc/thread-self/schedstat, null where unavailable. */
function runQueueWaitUs(): number | null {
  try {
    const fields = readFileSync('/proc/thread-self/schedstat', 'utf8').trim().split(/\s+/);
    const ns = Number(fields[1]);
    return Number.isFinite(ns) ? ns / 1000 : null;
  } catch {
    return null;
  }
}

const value = (rank: number, i: number) => ((i * 7 + rank * 5) % 23) - 11 + rank;

function fill(array: RingArray, rank: number): void {
  const half = array instanceof Uint16Array;
  for (let i = 0; i < array.length; i++) array[i] = half ? numberToHalf(value(rank, i)) : value(rank, i);
}

function expectedAt(
  op: BenchOp,
  redop: ReduceOp,
  n: number,
  root: number,
  rank: number,
  count: number,
  i: number,
): number {
  if (op === 'all_reduce') {
    let acc = value(0, i);
    for (let r = 1; r < n; r++)
      acc =
        redop === 'sum' ? acc + value(r, i) : redop === 'max' ? Math.max(acc, value(r, i)) : Math.min(acc, value(r, i));
    return acc;
  }
  if (op === 'all_gather') return value(Math.floor(i / count), i % count);
  if (op === 'broadcast') return value(root, i);
  return value((rank - 1 + n) % n, i); // sendrecv: from the left neighbour
}

/** Elements per rank for a nccl "size" (all-gather sizes are the total output). */
export function countFor(op: BenchOp, bytes: number, dtype: Dtype, n: number): number {
  const elem = DTYPE_BYTES[dtype];
  return op === 'all_gather' ? Math.floor(bytes / (elem * n)) : Math.floor(bytes / elem);
}

export async function runSweep(
  comm: RingCommunicator,
  config: SweepConfig,
  onRow: (row: RankResult) => void,
): Promise<RankResult[]> {
  const n = comm.worldSize;
  const results: RankResult[] = [];
  for (const op of config.ops) {
    for (const size of config.sizes) {
      const count = countFor(op, size, config.dtype, n);
      if (count < 1) continue;
      // Buffers in the communicator's kernel memory: all-reduce then runs in place with no copies.
      const input = comm.alloc(config.dtype, count);
      // Only all-gather and send/recv need a second buffer (all-reduce and broadcast run in place).
      const output =
        op === 'all_gather' || op === 'sendrecv'
          ? comm.alloc(config.dtype, op === 'all_gather' ? count * n : count)
          : input;
      const once = () => {
        switch (op) {
          case 'all_reduce':
            return comm.allReduce(input, config.redop);
          case 'all_gather':
            return comm.allGather(input, output);
          case 'broadcast':
            return comm.broadcast(input, config.root);
          case 'sendrecv':
            return comm.sendRecv(input, output, 1);
        }
      };
      fill(input, comm.rank);
      for (let i = 0; i < config.warmup; i++) await once();
      await comm.barrier();
      const times: number[] = [];
      const cpu = process.cpuUsage();
      const wait0 = runQueueWaitUs();
      const start = performance.now();
      for (let i = 0; i < config.iters; i++) {
        const t0 = performance.now();
        await once();
        times.push((performance.now() - t0) * 1000);
      }
      const meanUs = ((performance.now() - start) * 1000) / Math.max(1, config.iters);
      const used = process.cpuUsage(cpu);
      const cpuUs = (used.user + used.system) / Math.max(1, config.iters);
      const sysUs = used.system / Math.max(1, config.iters);
      const wait1 = runQueueWaitUs();
      const runWaitUs = wait0 !== null && wait1 !== null ? (wait1 - wait0) / Math.max(1, config.iters) : undefined;
      times.sort((a, b) => a - b);
      let wrong: number | null = null;
      if (config.check) {
        fill(input, comm.rank);
        await once();
        const result = op === 'all_gather' || op === 'sendrecv' ? output : input;
        const half = result instanceof Uint16Array;
        wrong = 0;
        for (let i = 0; i < result.length; i++) {
          const want = expectedAt(op, config.redop, n, config.root, comm.rank, count, i);
          if (result[i] !== (half ? numberToHalf(want) : want)) wrong++;
        }
      }
      comm.free(input);
      if (output !== input) comm.free(output);
      const row: RankResult = {
        op,
        bytes: size,
        count,
        meanUs,
        medianUs: times[Math.floor(times.length / 2)] ?? 0,
        cpuUs,
        sysUs,
        ...(runWaitUs !== undefined ? { runWaitUs } : {}),
        wrong,
      };
      results.push(row);
      onRow(row);
    }
  }
  return results;
}
