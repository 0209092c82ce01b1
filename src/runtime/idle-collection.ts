import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createLogger } from './log.js';
import {
  countIdleCollection,
  msSinceFullCollection,
  type ThreadHeap,
  threadHeap,
  watchLiveHeap,
} from './thread-heap.js';

/**
 * A full collection for a thread that has gone `intervalMs` without one, as the JVM's G1 does with
 * `G1PeriodicGCInterval` (JEP 346) for the same reason: the collector gives memory back only at a full collection,
 * and it starts one when the old generation reaches a limit set from the last one, which a thread that allocates
 * little reaches after hours. Until then its garbage stays in RSS: in a two-hour soak the leader's placement
 * planner went from 10 to 13.5 MiB of heap with one full collection in all, its live objects flat at 8.6 MiB
 * (docs/benchmarks.md, Soak). A thread that collects on its own is left alone; so is one with less than
 * `MIN_GARBAGE_BYTES` over what its last collection kept. The collection is V8's incremental one
 * (`execution: 'async'`): marking runs in steps between tasks, not in one pause.
 */
export const DEFAULT_IDLE_COLLECTION_MINUTES = 5;

/** Heap in use over the last full collection's live bytes below which a collection would give back too little. */
export const MIN_GARBAGE_BYTES = 1 << 20;

/**
 * Whether a thread should collect now: none for `intervalMs`, and at least MIN_GARBAGE_BYTES in use over what the
 * last collection kept (before the first one is seen, what it kept is unknown: collect).
 */
export function idleCollectionDue(
  heap: Pick<ThreadHeap, 'usedBytes' | 'liveBytes'>,
  msSinceFull: number,
  intervalMs: number,
): boolean {
  if (!(intervalMs > 0) || msSinceFull < intervalMs) return false;
  return heap.liveBytes === undefined || heap.usedBytes - heap.liveBytes >= MIN_GARBAGE_BYTES;
}

type Collect = (options: { type: 'major'; execution: 'async' }) => Promise<void>;

let collect: Collect | undefined;
let stopCurrent: (() => void) | undefined;

/**
 * V8's `gc` function without starting Node with --expose-gc. The flag is process-wide: a worker created after
 * this has `gc` on its global; a context created after it (here, one throwaway context) has it too, and it
 * collects the whole heap of the thread that calls it. The same two lines are how Jest's leak detector gets it.
 */
export function exposedCollect(): Collect {
  if (collect) return collect;
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === 'function') return (collect = own as Collect);
  setFlagsFromString('--expose-gc');
  return (collect = runInNewContext('gc') as Collect);
}

/**
 * Starts checking this thread every quarter interval (once per thread: a second call replaces the first);
 * `intervalMs` 0 turns it off. Returns the stop function. Timers are unref'd: they never hold a thread open.
 */
export function startIdleCollection(intervalMs: number): () => void {
  stopCurrent?.();
  stopCurrent = undefined;
  if (!(intervalMs > 0)) return () => {};
  watchLiveHeap();
  const run = exposedCollect();
  const log = createLogger({ component: 'idle-collection' });
  let running = false;
  const timer = setInterval(
    () => {
      if (running) return;
      const heap = threadHeap();
      if (!idleCollectionDue(heap, msSinceFullCollection(), intervalMs)) return;
      running = true;
      countIdleCollection();
      log.debug('idle full collection', {
        usedBytes: heap.usedBytes,
        liveBytes: heap.liveBytes,
        sinceLastMs: Math.round(msSinceFullCollection()),
      });
      run({ type: 'major', execution: 'async' })
        .catch((error: unknown) => log.warn('idle collection failed', { error }))
        .finally(() => {
          running = false;
        });
    },
    Math.max(1, Math.floor(intervalMs / 4)),
  );
  timer.unref();
  const stop = (): void => {
    clearInterval(timer);
    if (stopCurrent === stop) stopCurrent = undefined;
  };
  stopCurrent = stop;
  return stop;
}
