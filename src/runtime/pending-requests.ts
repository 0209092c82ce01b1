/**
 * Requests waiting for their reply, each with a deadline, behind a single timer.
 *
 * A timer per request (setTimeout on send, clearTimeout on reply) was a measurable share of a host↔actor round
 * trip in benchmarks/mailbox. Here a request costs a Map entry; the one timer is re-armed only when a deadline
 * earlier than the armed one arrives (never, with equal timeouts) and when it fires. While nothing waits the timer
 * is unref'd instead of cleared, so an idle process can still exit and the next request need not re-arm it.
 */
export interface PendingRequest<M> {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** The error a request gets when its deadline passes. */
  readonly timeoutError: () => Error;
  /** Caller data (e.g. the target, to fail its requests when it goes down). */
  readonly meta: M;
}

interface Entry<M> {
  readonly request: PendingRequest<M>;
  readonly deadline: number;
}

export class PendingRequests<M = undefined> {
  readonly #entries = new Map<number, Entry<M>>();
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #armedFor = Infinity;
  readonly #sweep = (): void => this.#expire();

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  get size(): number {
    return this.#entries.size;
  }

  add(corr: number, timeoutMs: number, request: PendingRequest<M>): void {
    const deadline = this.#now() + timeoutMs;
    this.#entries.set(corr, { request, deadline });
    if (deadline < this.#armedFor) this.#arm(deadline);
    else this.#timer?.ref();
  }

  /** Removes and returns the request waiting under `corr` (undefined: it timed out or was never sent). */
  take(corr: number): PendingRequest<M> | undefined {
    const entry = this.#entries.get(corr);
    if (!entry) return undefined;
    this.#entries.delete(corr);
    if (this.#entries.size === 0) this.#timer?.unref();
    return entry.request;
  }

  /** Removes and rejects every request whose meta matches; returns how many. */
  rejectWhere(match: (meta: M) => boolean, error: () => Error): number {
    let count = 0;
    for (const [corr, entry] of this.#entries) {
      if (!match(entry.request.meta)) continue;
      this.#entries.delete(corr);
      entry.request.reject(error());
      count++;
    }
    if (this.#entries.size === 0) this.#timer?.unref();
    return count;
  }

  /** Rejects everything and stops the timer. */
  clear(error: () => Error): void {
    this.rejectWhere(() => true, error);
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Infinity;
  }

  #arm(deadline: number): void {
    clearTimeout(this.#timer);
    this.#armedFor = deadline;
    this.#timer = setTimeout(this.#sweep, Math.max(0, Math.ceil(deadline - this.#now())));
  }

  #expire(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    // Node may fire a timer up to a millisecond before its nominal time: treat that as due.
    const now = this.#now() + 1;
    let next = Infinity;
    for (const [corr, entry] of this.#entries) {
      if (entry.deadline <= now) {
        this.#entries.delete(corr);
        entry.request.reject(entry.request.timeoutError());
      } else if (entry.deadline < next) {
        next = entry.deadline;
      }
    }
    if (next !== Infinity) this.#arm(next);
  }
}
