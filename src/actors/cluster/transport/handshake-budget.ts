/**
 * The budget of inbound cluster connections still in their handshake, apart from the established ones: a
 * stranger can open sockets to the cluster port, so they get at most `max` slots in all, at most
 * MAX_PENDING_PER_ADDRESS from one address (a member elsewhere always finds one), each for a short deadline
 * (the connection's handshake timeout). A connection leaves the budget when it is authenticated or closed.
 */
export const DEFAULT_MAX_PENDING_HANDSHAKES = 64;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 2500;
export const MAX_PENDING_PER_ADDRESS = 8;

export class HandshakeBudget<C> {
  readonly #max: number;
  readonly #byAddress = new Map<string, Set<C>>();
  #count = 0;
  /** Connections refused at a limit since start. */
  refused = 0;

  constructor(max = DEFAULT_MAX_PENDING_HANDSHAKES) {
    this.#max = max;
  }

  get pending(): number {
    return this.#count;
  }

  /** Why a connection from `from` cannot start a handshake now (null: it can). Counts a refusal. */
  refusal(from: string): string | null {
    const why =
      this.#count >= this.#max
        ? `${this.#max} handshakes pending (--max-pending-handshakes)`
        : (this.#byAddress.get(from)?.size ?? 0) >= Math.min(MAX_PENDING_PER_ADDRESS, this.#max)
          ? `${MAX_PENDING_PER_ADDRESS} handshakes pending from ${from}`
          : null;
    if (why) this.refused++;
    return why;
  }

  add(from: string, conn: C): void {
    let set = this.#byAddress.get(from);
    if (!set) this.#byAddress.set(from, (set = new Set()));
    set.add(conn);
    this.#count++;
  }

  /** The connection is authenticated or closed (a no-op when it was not pending). */
  settle(from: string, conn: C): void {
    const set = this.#byAddress.get(from);
    if (!set?.delete(conn)) return;
    this.#count--;
    if (set.size === 0) this.#byAddress.delete(from);
  }
}
