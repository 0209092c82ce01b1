/**
 * One memory sample of every thread of this node for /metrics: main's own figures, and each actor's answer to a
 * `heap` request. A thread that does not answer in time (busy past the timeout, restarting) has no figures in this
 * sample, and says so: it is listed in `threadsUnanswered` with the error (/metrics:
 * torus_thread_metrics_answered 0) and counted (torus_thread_metrics_unanswered_total), so a reader of the sums
 * (the soak's "outside the heaps") can tell a missing thread from one that holds nothing.
 */
import { asTorusError } from '../protocols/errors.js';
import type { NodeMetrics } from '../api/node-facade.js';
import type { Runtime } from '../runtime/runtime.js';
import { threadHeap, type ThreadHeap } from '../runtime/thread-heap.js';

type HeapFigures = Pick<
  NodeMetrics,
  | 'threadHeapBytes'
  | 'threadHeapTotalBytes'
  | 'threadHeapLimitBytes'
  | 'threadHeapLiveBytes'
  | 'threadExternalBytes'
  | 'threadMallocedBytes'
  | 'threadIdleCollections'
  | 'threadsUnanswered'
  | 'threadUnansweredTotal'
>;

const HEAP_TIMEOUT_MS = 1000;

export class ThreadSamples {
  readonly #runtime: Runtime;
  readonly #timeoutMs: number;
  readonly #unanswered = new Map<string, number>();

  constructor(runtime: Runtime, timeoutMs = HEAP_TIMEOUT_MS) {
    this.#runtime = runtime;
    this.#timeoutMs = timeoutMs;
  }

  async sample(): Promise<HeapFigures> {
    const used: Record<string, number> = {};
    const total: Record<string, number> = {};
    const limit: Record<string, number> = {};
    const live: Record<string, number> = {};
    const external: Record<string, number> = {};
    const malloced: Record<string, number> = {};
    const idle: Record<string, number> = {};
    const unanswered: Record<string, string> = {};
    const put = (name: string, heap: Partial<ThreadHeap> | undefined): void => {
      if (typeof heap?.usedBytes === 'number') used[name] = heap.usedBytes;
      if (typeof heap?.totalBytes === 'number') total[name] = heap.totalBytes;
      if (typeof heap?.limitBytes === 'number') limit[name] = heap.limitBytes;
      if (typeof heap?.liveBytes === 'number') live[name] = heap.liveBytes;
      if (typeof heap?.externalBytes === 'number') external[name] = heap.externalBytes;
      if (typeof heap?.mallocedBytes === 'number') malloced[name] = heap.mallocedBytes;
      if (typeof heap?.idleCollections === 'number') idle[name] = heap.idleCollections;
    };
    put('main', threadHeap());
    await Promise.all(
      // One sample per thread (an actor answering at two addresses is one thread).
      Object.keys(this.#runtime.stats()).map(async (name) => {
        try {
          put(
            name,
            await this.#runtime.request<Partial<ThreadHeap>>(name, { type: 'heap' }, { timeoutMs: this.#timeoutMs }),
          );
        } catch (error) {
          const { code, message } = asTorusError(error);
          unanswered[name] = `${code}: ${message}`;
          this.#unanswered.set(name, (this.#unanswered.get(name) ?? 0) + 1);
        }
      }),
    );
    const unansweredTotal: Record<string, number> = { main: 0 };
    for (const name of Object.keys(this.#runtime.stats())) unansweredTotal[name] = this.#unanswered.get(name) ?? 0;
    return {
      threadHeapBytes: used,
      threadHeapTotalBytes: total,
      threadHeapLimitBytes: limit,
      threadHeapLiveBytes: live,
      threadExternalBytes: external,
      threadMallocedBytes: malloced,
      threadIdleCollections: idle,
      threadsUnanswered: unanswered,
      threadUnansweredTotal: unansweredTotal,
    };
  }
}
