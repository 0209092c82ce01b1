import { constants, type PerformanceEntry, PerformanceObserver, performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';

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
  /** Full collections this thread started itself because it had gone too long without one (idle-collection.ts). */
  readonly idleCollections: number;
}

/** Spaces whose objects a full collection keeps: all but the young generation, which allocation refills at once. */
const YOUNG_SPACES = new Set(['new_space', 'new_large_object_space']);

let observer: PerformanceObserver | undefined;
let liveBytes: number | undefined;
/** performance.now() of the last full collection seen, or of the start of watching before the first. */
let lastFullCollectionAt = 0;
let idleCollections = 0;

function oldGenerationUsed(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) if (!YOUNG_SPACES.has(space.space_name)) used += space.space_used_size;
  return used;
}

/**
 * Starts following this thread's full collections (once per thread; later calls do nothing). Node reports each
 * collection as a `gc` performance entry shortly after it ends; the old generation's use read then is what the full
 * collection kept, plus whatever reached it since: little, as that takes a young collection in between, except for
 * large objects (over ~128 KiB), which V8 allocates in the old generation directly.
 * Not V8's GCProfiler: restarted periodically to keep its record small, it raised the process's RSS outside the heaps
 * by about 130 MiB in 20 minutes of a loaded soak.
 */
export function watchLiveHeap(): void {
  if (observer) return;
  lastFullCollectionAt = performance.now();
  observer = new PerformanceObserver((list) => {
    // A gc entry's detail ({kind, flags}) is missing from this version of Node's typings.
    for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[])
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        liveBytes = oldGenerationUsed();
        lastFullCollectionAt = entry.startTime + entry.duration;
      }
  });
  observer.observe({ entryTypes: ['gc'] });
}

/** Milliseconds since this thread's last full collection (since watchLiveHeap, before the first one). */
export function msSinceFullCollection(): number {
  return performance.now() - lastFullCollectionAt;
}

/** Counts a full collection the thread started itself (idle-collection.ts). */
export function countIdleCollection(): void {
  idleCollections += 1;
}

export function threadHeap(): ThreadHeap {
  const h = getHeapStatistics();
  return {
    usedBytes: h.used_heap_size,
    totalBytes: h.total_heap_size,
    limitBytes: h.heap_size_limit,
    externalBytes: h.external_memory,
    mallocedBytes: h.malloced_memory,
    idleCollections,
    ...(liveBytes !== undefined ? { liveBytes } : {}),
  };
}
