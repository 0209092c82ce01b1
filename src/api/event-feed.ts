import type { IndexedEvent } from './node-facade.js';

/** 8 MiB of recent events for SSE clients that reconnect with Last-Event-ID. */
export const DEFAULT_FEED_BYTES = 8 * 1024 * 1024;

/**
 * A bounded, append-only buffer of applied events that hands out `NodeFacade.events()` iterables:
 * retained events after the requested index first, then live ones, until the caller's signal aborts.
 * Push (append) and pull (iterate) meet here so a slow SSE client only costs its own queue, which is
 * capped: a client that falls `maxQueued` events behind is ended and reconnects with Last-Event-ID.
 * The buffer is bounded in events (`retain`) and in bytes (`retainBytes`, an event's JSON text): a cluster whose
 * events are large keeps fewer of them, not more memory. Clients read the one buffer, so it bounds them too.
 */
export class EventFeed {
  readonly #retain: number;
  readonly #maxQueued: number;
  readonly #retainBytes: number;
  #buffer: IndexedEvent[] = [];
  #sizes: number[] = [];
  #bytes = 0;
  #lastIndex = 0;
  readonly #listeners = new Set<() => void>();
  readonly #replacedListeners = new Set<() => void>();

  constructor(options: { retain?: number; maxQueued?: number; retainBytes?: number } = {}) {
    this.#retain = options.retain ?? 1000;
    this.#retainBytes = options.retainBytes ?? DEFAULT_FEED_BYTES;
    this.#maxQueued = options.maxQueued ?? 10_000;
  }

  get lastIndex(): number {
    return this.#lastIndex;
  }

  /** Open iterators (SSE clients); tests use it to prove disconnects release their subscription. */
  /** Bytes the retained events take (their JSON text). */
  get retainedBytes(): number {
    return this.#bytes;
  }

  get subscribers(): number {
    return this.#listeners.size;
  }

  /** Appends an applied event; indices must increase (a stale or repeated index is ignored). */
  append(entry: IndexedEvent): void {
    if (entry.index <= this.#lastIndex) return;
    this.#lastIndex = entry.index;
    const size = Buffer.byteLength(JSON.stringify(entry));
    this.#buffer.push(entry);
    this.#sizes.push(size);
    this.#bytes += size;
    let drop = Math.max(0, this.#buffer.length - this.#retain);
    for (let i = 0; i < drop; i++) this.#bytes -= this.#sizes[i]!;
    // The newest event always stays, even alone over the budget: a live client must still see it.
    while (this.#bytes > this.#retainBytes && drop < this.#buffer.length - 1) this.#bytes -= this.#sizes[drop++]!;
    if (drop > 0) {
      this.#buffer.splice(0, drop);
      this.#sizes.splice(0, drop);
    }
    for (const wake of this.#listeners) wake();
  }

  /**
   * The applied state was replaced rather than advanced (a snapshot installed, the saved state restored): what it
   * now holds came with no events, so whoever waits on the state reads it again.
   */
  replaced(): void {
    for (const listener of this.#replacedListeners) listener();
  }

  /** Calls `listener` on each replacement; returns the unsubscribe. */
  onReplaced(listener: () => void): () => void {
    this.#replacedListeners.add(listener);
    return () => this.#replacedListeners.delete(listener);
  }

  async *events(afterIndex: number, signal: AbortSignal): AsyncGenerator<IndexedEvent> {
    let cursor = afterIndex;
    let started = false;
    let wake: (() => void) | undefined;
    const listener = (): void => wake?.();
    const onAbort = (): void => wake?.();
    this.#listeners.add(listener);
    signal.addEventListener('abort', onAbort);
    try {
      while (!signal.aborted) {
        const pending = this.#buffer.filter((e) => e.index > cursor);
        if (pending.length > this.#maxQueued) return;
        // Fell behind what is retained while connected: end, so it reconnects and the API reports the gap.
        if (started && (this.#buffer[0]?.index ?? 0) > cursor + 1) return;
        started = true;
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
