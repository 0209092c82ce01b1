/**
 * One collective in flight: counts outstanding sends and receives, settles once all are done or on
 * the first failure, and watches progress so a silent peer fails the op with TORUS_RING_TIMEOUT
 * instead of hanging it.
 */
import { performance } from 'node:perf_hooks';
import { TorusError } from '../protocols/errors.js';
import type { Conn } from './peer-links.js';

/** How an op reports a failure its communicator must act on (break the ring, tell the neighbours). */
export interface OpRunHooks {
  /** A send failed or a peer went silent: the communicator breaks, sends abort frames, and fails this op. */
  readonly fault: (conn: Conn, error: TorusError) => void;
  /** The error of a connection that has already ended (its peer will send nothing more), if it has. */
  readonly ended: (conn: Conn) => TorusError | undefined;
}

export class OpRun {
  readonly promise: Promise<void>;
  #pending = 1; // the set-up hold, released by start()
  #settled = false;
  #resolve!: () => void;
  #reject!: (error: TorusError) => void;
  readonly #started = performance.now();
  readonly #readers = new Set<Conn>();
  readonly #writers = new Set<Conn>();
  readonly #writesPending = new Map<Conn, number>();

  constructor(
    readonly name: string,
    readonly timeoutMs: number,
    readonly describePeer: (rank: number) => string,
    readonly hooks: OpRunHooks,
  ) {
    this.promise = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  get settled(): boolean {
    return this.#settled;
  }

  send(conn: Conn, bytes: Uint8Array): void {
    if (this.#settled || bytes.length === 0) return;
    this.#pending++;
    this.#writers.add(conn);
    this.#writesPending.set(conn, (this.#writesPending.get(conn) ?? 0) + 1);
    conn.socket.write(bytes, (error) => {
      this.#writesPending.set(conn, (this.#writesPending.get(conn) ?? 1) - 1);
      if (error)
        this.#fault(
          conn,
          new TorusError(
            'TORUS_RING_PEER_LOST',
            `${this.name}: sending to ${this.describePeer(conn.peer)} failed: ${error.message}`,
            { peer: conn.peer },
            { cause: error },
          ),
        );
      else this.#release();
    });
  }

  expect(conn: Conn, target: Uint8Array, onDone: () => void): void {
    if (this.#settled) return;
    this.#pending++;
    this.#readers.add(conn);
    (conn.reader as NonNullable<Conn['reader']>).expect(target, () => {
      if (this.#settled) return;
      onDone();
      this.#release();
    });
    // Bytes still owed by a connection that has ended will never come: fail now, not at the timeout (what it sent
    // before its end was already taken from the stash above).
    const gone = this.hooks.ended(conn);
    if (gone && this.needs(conn)) this.#fault(conn, gone);
  }

  #fault(conn: Conn, error: TorusError): void {
    if (!this.#settled) this.hooks.fault(conn, error);
  }

  /** True while this op still needs `conn`: bytes to read from it or writes to it not yet completed. */
  needs(conn: Conn): boolean {
    if (this.#settled) return false;
    return (
      (conn.reader !== null && this.#readers.has(conn) && conn.reader.pending > 0) ||
      (this.#writesPending.get(conn) ?? 0) > 0
    );
  }

  /** Ends set-up: from here the op settles when the last send and receive complete. */
  start(): void {
    this.#release();
  }

  fail(error: TorusError): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(error);
  }

  #release(): void {
    if (--this.#pending === 0 && !this.#settled) {
      this.#settled = true;
      this.#resolve();
    }
  }

  /**
   * The connection this op waits on that has been silent the longest (ms since its last byte, or since the
   * op began), leaving out peers in `alive`: the likeliest culprit, as the others stall behind it.
   */
  longestSilent(alive: ReadonlySet<number> = new Set()): { conn: Conn; idle: number } | null {
    if (this.#settled) return null;
    const now = performance.now();
    let worst: { conn: Conn; idle: number } | null = null;
    for (const conn of this.#readers) {
      const reader = conn.reader;
      if (!reader || reader.pending === 0 || alive.has(conn.peer)) continue;
      const idle = now - Math.max(reader.lastProgress, this.#started);
      if (!worst || idle > worst.idle) worst = { conn, idle };
    }
    return worst;
  }

  /** A timeout error naming the peer of `conn`, silent for `idle` ms. */
  silenceError(conn: Conn, idle: number, why = ''): TorusError {
    return new TorusError(
      'TORUS_RING_TIMEOUT',
      `${this.name}: no data from ${this.describePeer(conn.peer)} for ${Math.round(idle)} ms (timeout ${this.timeoutMs} ms)${why}`,
      { peer: conn.peer, timeoutMs: this.timeoutMs },
    );
  }

  /** Called periodically by the communicator's watchdog: no bytes from a peer we wait on for timeoutMs → name it. */
  watch(): void {
    if (this.#settled) return;
    const now = performance.now();
    const silent = this.longestSilent();
    const worst = silent && silent.idle > this.timeoutMs ? silent : null;
    if (worst) {
      return this.#fault(worst.conn, this.silenceError(worst.conn, worst.idle));
    }
    if (now - this.#started > this.timeoutMs) {
      const stuck = [...this.#writers].filter((conn) => conn.socket.writableLength > 0);
      const readersIdle = [...this.#readers].every(
        (conn) => !conn.reader || conn.reader.pending === 0 || now - conn.reader.lastProgress > this.timeoutMs,
      );
      if (stuck.length > 0 && readersIdle) {
        const first = stuck[0] as Conn;
        this.#fault(
          first,
          new TorusError(
            'TORUS_RING_TIMEOUT',
            `${this.name}: ${this.describePeer(first.peer)} stopped reading (timeout ${this.timeoutMs} ms)`,
            { peer: first.peer, timeoutMs: this.timeoutMs },
          ),
        );
      }
    }
  }
}
