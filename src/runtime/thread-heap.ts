import { getHeapStatistics } from 'node:v8';

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
}

export function threadHeap(): ThreadHeap {
  const h = getHeapStatistics();
  return {
    usedBytes: h.used_heap_size,
    totalBytes: h.total_heap_size,
    limitBytes: h.heap_size_limit,
    externalBytes: h.external_memory,
    mallocedBytes: h.malloced_memory,
  };
}
