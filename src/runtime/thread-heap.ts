import { getHeapStatistics } from 'node:v8';

/**
 * This thread's V8 memory: each worker has its own heap, which the main thread's process figures do not show, and
 * holds memory outside it (Buffers and ArrayBuffers: `external`; V8's own allocations: `malloced`).
 */
export function threadHeap(): { usedBytes: number; totalBytes: number; externalBytes: number; mallocedBytes: number } {
  const h = getHeapStatistics();
  return {
    usedBytes: h.used_heap_size,
    totalBytes: h.total_heap_size,
    externalBytes: h.external_memory,
    mallocedBytes: h.malloced_memory,
  };
}
