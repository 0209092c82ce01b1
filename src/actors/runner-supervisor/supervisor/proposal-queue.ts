/**
 * What this node's runners report (RunnerStatusChanged, TaskStatusChanged, InstanceFailed …), proposed to the
 * cluster in order. A proposal answers once its entries committed, so one event per proposal made a runner's start
 * (Connecting, Connected, Loading, Loaded, WarmingUp, Ready: reported within milliseconds of each other) wait
 * one commit per status before its peers saw it Ready. Events that queue while a proposal is in flight go
 * together in the next one, in order (one batch: the leader sequences them as consecutive entries). A proposal
 * that fails is retried with backoff, one event at a time until one goes through (a batch holding an event the
 * leader refuses would otherwise hold back the events before it too).
 */
export interface ProposalQueueOptions<E> {
  /** proposes `events` (in order); resolves once they committed, rejects when they did not */
  readonly send: (events: readonly E[]) => Promise<void>;
  readonly stopping: () => boolean;
  /** `count` events committed */
  readonly onSent?: (count: number) => void;
  readonly onFailed?: (error: unknown) => void;
  /** events held at most (default 10 000): past it the oldest is dropped, never an unbounded queue */
  readonly maxQueued?: number;
  /** events per proposal at most (default 64) */
  readonly maxBatch?: number;
}

export class ProposalQueue<E> {
  readonly #queue: E[] = [];
  #draining = false;

  constructor(private readonly o: ProposalQueueOptions<E>) {}

  get length(): number {
    return this.#queue.length;
  }

  push(event: E): void {
    if (this.#queue.length >= (this.o.maxQueued ?? 10_000)) this.#queue.shift();
    this.#queue.push(event);
    void this.#drain();
  }

  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    let delay = 250;
    let batch = this.o.maxBatch ?? 64;
    try {
      while (this.#queue.length > 0 && !this.o.stopping()) {
        const events = this.#queue.splice(0, batch);
        try {
          await this.o.send(events);
          delay = 250;
          batch = this.o.maxBatch ?? 64;
          this.o.onSent?.(events.length);
        } catch (error) {
          this.#queue.unshift(...events);
          if (this.o.stopping()) break;
          this.o.onFailed?.(error);
          batch = 1;
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(delay * 2, 5000);
        }
      }
    } finally {
      this.#draining = false;
    }
  }
}
