/**
 * What this machine's CPU can do, measured: streaming memory-read bandwidth and f32 matrix-multiply throughput.
 * The placement planner's cost model divides a stage's weight bytes by the first and its FLOPs by the second.
 * Both runs are bounded by a time budget (the caller's whole measurement stays within ~2 s of one core).
 */
import { performance } from 'node:perf_hooks';
import { KernelMemory } from './kernels/kernel-memory.js';
import { MatmulKernel } from './kernels/matmul.js';
import { createReducer } from './kernels/reducer.js';

export interface DeviceSpeed {
  /** 10^9 bytes per second read from a buffer much larger than the caches */
  readonly memoryBandwidthGBps: number;
  /** 10^9 f32 multiply-adds ×2 per second on one core */
  readonly gflops: number;
  /** 'wasm' (SIMD) or 'js': which read loop measured the bandwidth */
  readonly kernel: 'wasm' | 'js';
  /** 'wasm' (SIMD) or 'js': which matmul measured the FLOP/s (the pipeline workload runs the same one) */
  readonly computeKernel: 'wasm' | 'js';
  readonly elapsedMs: number;
}

export interface MeasureOptions {
  /** Bytes of the streamed buffer (default 64 MiB, well above any L3 of a desktop CPU). */
  readonly bufferBytes?: number;
  readonly memoryBudgetMs?: number;
  readonly computeBudgetMs?: number;
}

/** A chunk that stays in L1 is the destination; the sweep over the large buffer is what costs (memory reads). */
const CHUNK_BYTES = 64 * 1024;

/**
 * Streams the whole buffer through a SIMD max-reduce into one cache-resident chunk, repeatedly, until the budget
 * is spent; the best pass counts (others are disturbed by the rest of the machine).
 */
export function measureMemoryBandwidth(
  bufferBytes = 64 * 2 ** 20,
  budgetMs = 800,
): { gbps: number; kernel: 'wasm' | 'js' } {
  const bytes = Math.max(CHUNK_BYTES * 4, Math.floor(bufferBytes / CHUNK_BYTES) * CHUNK_BYTES);
  const memory = new KernelMemory(bytes + 2 * CHUNK_BYTES);
  const sink = memory.alloc(CHUNK_BYTES);
  const source = memory.alloc(bytes);
  // Touch every page so the first pass measures memory, not page faults.
  new Float32Array(memory.buffer, source.offset, bytes / 4).fill(1);
  const reducer = createReducer(memory);
  const count = CHUNK_BYTES / 4;
  let best = 0;
  const start = performance.now();
  let passes = 0;
  while (passes < 2 || performance.now() - start < budgetMs) {
    const t0 = performance.now();
    for (let off = 0; off < bytes; off += CHUNK_BYTES)
      reducer.reduce('max', 'float32', sink.offset, source.offset + off, count);
    const ms = performance.now() - t0;
    if (ms > 0) best = Math.max(best, bytes / (ms * 1e6));
    passes++;
    if (passes >= 64) break;
  }
  return { gbps: best, kernel: reducer.kind };
}

/** The matrix side of the compute kernel: the measurement and the pipeline workload's FLOPs use the same one. */
export const MATMUL_N = 96;

/**
 * What one pipeline stage does per step, as the cost model assumes: stream its weight bytes once (the SIMD read
 * sweep of the bandwidth measurement) and run its FLOPs (the measurement's matmul, rounded up to whole kernels).
 */
export class StageWork {
  readonly #memory: KernelMemory;
  readonly #sink: number;
  readonly #source: number;
  readonly #bytes: number;
  readonly #reducer: ReturnType<typeof createReducer>;
  readonly #matmul = new MatmulKernel(MATMUL_N);

  constructor(weightBytes: number) {
    this.#bytes = Math.max(CHUNK_BYTES, Math.ceil(weightBytes / CHUNK_BYTES) * CHUNK_BYTES);
    this.#memory = new KernelMemory(this.#bytes + 2 * CHUNK_BYTES);
    this.#sink = this.#memory.alloc(CHUNK_BYTES).offset;
    this.#source = this.#memory.alloc(this.#bytes).offset;
    new Float32Array(this.#memory.buffer, this.#source, this.#bytes / 4).fill(1);
    this.#reducer = createReducer(this.#memory);
    this.#matmul.a.fill(0.5);
    this.#matmul.b.fill(0.25);
  }

  get weightBytes(): number {
    return this.#bytes;
  }

  /** Streams the weights once, then runs `flops` FLOPs. */
  run(flops: number): void {
    const count = CHUNK_BYTES / 4;
    for (let off = 0; off < this.#bytes; off += CHUNK_BYTES)
      this.#reducer.reduce('max', 'float32', this.#sink, this.#source + off, count);
    const kernels = Math.ceil(flops / this.#matmul.flopsPerRun);
    for (let i = 0; i < kernels; i++) this.#matmul.run();
  }
}

/** n×n f32 multiply-accumulates (the SIMD kernel where it loads), repeated within the budget; the best run counts. */
export function measureMatmulGflops(
  n = MATMUL_N,
  budgetMs = 800,
  prefer: 'wasm' | 'js' = 'wasm',
): { gflops: number; kernel: 'wasm' | 'js' } {
  const mm = new MatmulKernel(n, prefer);
  for (let i = 0; i < n * n; i++) {
    mm.a[i] = (i % 7) * 0.25;
    mm.b[i] = (i % 5) * 0.5;
  }
  let best = 0;
  const start = performance.now();
  let runs = 0;
  while (runs < 2 || performance.now() - start < budgetMs) {
    mm.c.fill(0);
    const t0 = performance.now();
    // Several kernels per timing, so the timer's resolution does not decide the figure.
    for (let r = 0; r < 8; r++) mm.run();
    const ms = performance.now() - t0;
    if (ms > 0) best = Math.max(best, (8 * mm.flopsPerRun) / (ms * 1e6));
    runs++;
    if (runs >= 200) break;
  }
  // Keep the result observable so the loop cannot be optimised away.
  if (Number.isNaN(mm.c[n + 1])) throw new Error('matmul produced NaN');
  return { gflops: best, kernel: mm.kind };
}

export function measureDeviceSpeed(options: MeasureOptions = {}): DeviceSpeed {
  const start = performance.now();
  const memory = measureMemoryBandwidth(options.bufferBytes, options.memoryBudgetMs);
  const compute = measureMatmulGflops(MATMUL_N, options.computeBudgetMs);
  const round = (x: number): number => Math.round(x * 1000) / 1000;
  return {
    memoryBandwidthGBps: round(memory.gbps),
    gflops: round(compute.gflops),
    kernel: memory.kernel,
    computeKernel: compute.kernel,
    elapsedMs: Math.round(performance.now() - start),
  };
}
