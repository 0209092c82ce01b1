import { GCProfiler, getHeapStatistics } from 'node:v8';

/**
 * This thread's V8 memory: each worker has its own heap, which the main thread's process figures do not show, and
 * holds memory outside it (Buffers and ArrayBuffers: `external`; V8's own allocations: `malloced`).
 */
export interface ThreadHeap {
  readonly usedBytes: number;
  readonly totalBytes: number;
  /** The most the heap may grow to: the thread's budget (ActorSpec.heapLimitMb) or V8's default. */
  readonly limitBytes: number;
  readonly externalBytes: number;
  readonly mallocedBytes: number;
  /**
   * The heap in use just after the thread's last full (mark-compact) collection: what its objects really hold.
   * `usedBytes` also counts garbage not yet collected and `totalBytes` what V8 keeps committed, so both move in waves
   * with the collector; this one moves only with what is kept. Absent before the first full collection is seen.
   */
  readonly liveBytes?: number;
}

/** How often the profiler's record is read and restarted: it holds one entry per collection until read. */
const LIVE_HEAP_READ_EVERY_MS = 10_000;

let profiler: GCProfiler | undefined;
let liveBytes: number | undefined;

function readProfile(): void {
  if (!profiler) return;
  const record = profiler.stop();
  profiler.start();
  for (const gc of record?.statistics ?? [])
    if (gc.gcType === 'MarkSweepCompact') liveBytes = gc.afterGC.heapStatistics.usedHeapSize;
}

/**
 * Starts following this thread's full collections (once per thread; later calls do nothing). V8 reports the heap
 * after each collection to a GCProfiler, which is read every 10 s so that its record stays small.
 */
export function watchLiveHeap(): void {
  if (profiler) return;
  profiler = new GCProfiler();
  profiler.start();
  setInterval(readProfile, LIVE_HEAP_READ_EVERY_MS).unref();
}

export function threadHeap(): ThreadHeap {
  readProfile();
  const h = getHeapStatistics();
  return {
    usedBytes: h.used_heap_size,
    totalBytes: h.total_heap_size,
    limitBytes: h.heap_size_limit,
    externalBytes: h.external_memory,
    mallocedBytes: h.malloced_memory,
    ...(liveBytes !== undefined ? { liveBytes } : {}),
  };
}
