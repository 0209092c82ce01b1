/**
 * A gate that holds calls until the node's actors have all started. The cluster's thread starts first, so a node
 * may lead (and be sent commands) while the planner and the runner supervisor are still starting: such a command
 * waits at the gate rather than failing on an actor that is not there yet. A node that fails to start closes the
 * gate with the reason, so nothing waits forever.
 */
export class StartGate {
  #open!: () => void;
  #fail!: (err: unknown) => void;
  readonly #opened: Promise<void>;

  constructor() {
    this.#opened = new Promise<void>((resolve, reject) => {
      this.#open = resolve;
      this.#fail = reject;
    });
    this.#opened.catch(() => {}); // a start failure is reported by the start itself; waiters get it too
  }

  /** Every actor started: calls held at the gate run, and later ones at once. */
  open(): void {
    this.#open();
  }

  /** The node did not start: held calls (and later ones) fail with `err`. */
  fail(err: unknown): void {
    this.#fail(err);
  }

  /** `handler` wrapped so that each call first waits for the gate. */
  guard<A extends unknown[], R>(handler: (...args: A) => R | Promise<R>): (...args: A) => Promise<R> {
    return async (...args) => {
      await this.#opened;
      return handler(...args);
    };
  }
}
