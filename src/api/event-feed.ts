import type { IndexedEvent } from './node-facade.js';

/**
 * A bounded, append-only buffer of applied events that hands out `NodeFacade.events()` iterables:
 * retained events after the requested index first, then live ones, until the caller's signal aborts.
 * Push (append) and pull (iterate) meet here so a slow SSE client only costs its own queue, which is
 * capped: a client that falls `maxQueued` events behind is ended and reconnects with Last-Event-ID.
 */
export class EventFeed {
  readonly #retain: number;
  readonly #maxQueued: number;
  #buffer: IndexedEvent[] = [];
  #lastIndex = 0;
  readonly #listeners = new Set<() => void>();

  constructor(options: { retain?: number; maxQueued?: number } = {}) {
    this.#retain = options.retain ?? 1000;
    this.#maxQueued = options.maxQueued ?? 10_000;
  }

  get lastIndex(): number {
    return this.#lastIndex;
  }

  /** Open iterators (SSE clients); tests use it to prove disconnects release their subscription. */
  get subscribers(): number {
    return this.#listeners.size;
  }

  /** Appends an applied event; indices must increase (a stale or repeated index is ignored). */
  append(entry: IndexedEvent): void {
    if (entry.index <= this.#lastIndex) return;
    this.#lastIndex = entry.index;
    this.#buffer.push(entry);
    if (this.#buffer.length > this.#retain) this.#buffer.splice(0, this.#buffer.length - this.#retain);
    for (const wake of this.#listeners) wake();
  }

  async *events(afterIndex: number, signal: AbortSignal): AsyncGenerator<IndexedEvent> {
    let cursor = afterIndex;
    let wake: (() => void) | undefined;
    const listener = (): void => wake?.();
    const onAbort = (): void => wake?.();
    this.#listeners.add(listener);
    signal.addEventListener('abort', onAbort);
    try {
      while (!signal.aborted) {
        const pending = this.#buffer.filter((e) => e.index > cursor);
        if (pending.length > this.#maxQueued) return;
        for (const entry of pending) {
          if (signal.aborted) return;
          cursor = entry.index;
          yield entry;
        }
        if (this.#lastIndex > cursor) continue; // appended while we were yielding
        await new Promise<void>((resolve) => {
          // An abort that came while we were suspended at `yield` fired with no waiter: check it here.
          if (signal.aborted) resolve();
          else wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      this.#listeners.delete(listener);
      signal.removeEventListener('abort', onAbort);
    }
  }
}
