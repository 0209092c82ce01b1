/**
 * RingCommunicator: one rank of a TCP ring. Owns the neighbour connections, the kernel memory and
 * the op queue (collectives run one at a time, in call order, which must be the same on every rank).
 * A lost peer or a silent one fails the running op with an error naming it, then tears every socket
 * down: the communicator is then broken and every later call rejects with the same error.
 */
import { ClosedResourceError, TorusError, asTorusError } from '../protocols/errors.js';
import { createLogger } from '../runtime/log.js';
import {
  DTYPE_BYTES,
  KernelMemory,
  createReducer,
  typedView,
  type Dtype,
  type ReduceOp,
  type Reducer,
  type Region,
  type RingArray,
} from '../native/kernels/index.js';
import { encodeRingFrame, type AbortFrame } from '../protocols/ring-frames.js';
import { LaneFraming } from './lane-framing.js';
import { abortError, type LaneHeader, type RingContext } from './context.js';
import * as collectives from './collectives.js';
import type { LanePlan } from './layout.js';
import type { LaneIO } from './algorithms.js';
import { OpRun } from './op-run.js';
import { describePeer, establishLinks, readStats, type Conn, type PeerLinks } from './peer-links.js';
import { watchConn } from './conn-watch.js';
import { resolveOptions, type ResolvedOptions, type RingConnectOptions } from './options.js';
import { chooseBidirectional, interfaceOf, type DirectionsOption } from './directions.js';

const log = createLogger({ component: 'ring' });

export class RingCommunicator implements RingContext {
  readonly rank: number;
  readonly n: number;
  #options: ResolvedOptions;
  /** The ring's 'auto' choice of directions, agreed by every rank at set-up. */
  #autoBidirectional = false;
  readonly memory = new KernelMemory();
  readonly reducer: Reducer;
  #links: PeerLinks;
  #queue: Promise<unknown> = Promise.resolve();
  #current: OpRun | null = null;
  #broken: TorusError | null = null;
  #lost: { conn: Conn; error: TorusError } | null = null;
  /** Every connection that has ended, with the error naming its peer. */
  #ended = new Map<Conn, TorusError>();
  /** Set by #settleLost: broken locally, abort frames not sent yet. */
  #deferredAbort: { conn: Conn; error: TorusError } | null = null;
  #closing = false;
  readonly #framing: LaneFraming;
  #watchdog: NodeJS.Timeout | null = null;
  #scratch = new Map<string, Region>();
  #allocated = new Map<RingArray, Region>();

  private constructor(options: ResolvedOptions, links: PeerLinks) {
    this.rank = options.rank;
    this.n = options.hosts.length;
    this.#options = options;
    this.reducer = createReducer(this.memory, options.kernel);
    this.#links = links;
    this.#framing = new LaneFraming(this.rank, (peer) => describePeer(options.hosts, peer));
    for (const list of [links.readLeft, links.readRight, links.writeLeft, links.writeRight])
      list.sort((a, b) => a.index - b.index);
    for (const conn of links.all) this.#watch(conn);
  }

  /** Listens, dials both neighbours (bounded retries) and returns once every connection is acknowledged. */
  static async connect(options: RingConnectOptions): Promise<RingCommunicator> {
    const resolved = resolveOptions(options);
    let self: RingCommunicator | null = null;
    const links =
      resolved.hosts.length === 1
        ? { readLeft: [], readRight: [], writeLeft: [], writeRight: [], all: [] }
        : await establishLinks({
            rank: resolved.rank,
            hosts: resolved.hosts,
            connections: resolved.connections,
            ringId: resolved.ringId,
            connectTimeoutMs: resolved.connectTimeoutMs,
            retryDelayMs: resolved.retryDelayMs,
            key: resolved.key,
            onReaderFault: (conn, error) => {
              const c = conn();
              if (self && c) self.#fault(c, asTorusError(error));
            },
          });
    self = new RingCommunicator(resolved, links);
    if (resolved.directions === 'auto' && self.n > 2) {
      try {
        await self.#agreeDirections();
      } catch (error) {
        await self.close();
        throw error;
      }
    }
    return self;
  }

  /** Options in effect (`bidirectional` is the direction choice now in force). */
  get options(): ResolvedOptions {
    return this.#options;
  }

  /**
   * 'auto': this rank votes for both directions when its neighbours are on different local interfaces
   * (directions.ts); one tiny all-reduce (min, run with one direction on every rank) makes the vote the ring's.
   */
  async #agreeDirections(): Promise<void> {
    const left = this.#links.readLeft[0]?.socket.localAddress,
      right = this.#links.readRight[0]?.socket.localAddress;
    const vote = new Int32Array([chooseBidirectional('auto', this.n, interfaceOf(left), interfaceOf(right)) ? 1 : 0]);
    // Part of set-up: a neighbour may still be dialling its other side, so the set-up deadline applies, not timeoutMs.
    const timeoutMs = this.#options.timeoutMs;
    this.#options = { ...this.#options, timeoutMs: Math.max(timeoutMs, this.#options.connectTimeoutMs) };
    try {
      await this.allReduce(vote, 'min');
    } finally {
      this.#options = { ...this.#options, timeoutMs };
    }
    this.#autoBidirectional = vote[0] === 1;
    this.#options = { ...this.#options, bidirectional: this.#autoBidirectional };
    log.debug('ring directions', { rank: this.rank, left, right, both: this.#autoBidirectional });
  }

  /**
   * Changes the directions for the collectives issued after this call (in call order; every rank must make the
   * same call at the same point). 'auto' restores the choice agreed at set-up. Resolves to the setting in force.
   */
  setDirections(directions: DirectionsOption): Promise<boolean> {
    if (directions !== true && directions !== false && directions !== 'auto')
      return Promise.reject(new TorusError('TORUS_API_VALIDATION', "bidirectional must be true, false or 'auto'"));
    return this.#enqueue(async () => {
      const both =
        directions === 'auto'
          ? this.#options.directions === 'auto'
            ? this.#autoBidirectional
            : this.#options.directions
          : directions;
      this.#options = { ...this.#options, bidirectional: both };
      return both;
    }) as Promise<boolean>;
  }

  get worldSize(): number {
    return this.n;
  }
  /** Bytes received, and how many of them took a user-space copy (arrived before their target was posted). */
  get stats(): { bytesRead: number; bytesCopied: number } {
    return readStats(this.#links);
  }

  /** The error that broke this communicator, if any. */
  get error(): TorusError | null {
    return this.#broken;
  }

  /** A typed array in the communicator's kernel memory: collectives on it run in place, with no copy in or out. */
  alloc(dtype: Dtype, count: number): RingArray {
    const region = this.memory.alloc(count * DTYPE_BYTES[dtype]);
    const view = typedView(dtype, this.memory.buffer, region.offset, count);
    this.#allocated.set(view, region);
    return view;
  }

  free(array: RingArray): void {
    const region = this.#allocated.get(array);
    if (region) {
      this.#allocated.delete(array);
      this.memory.free(region);
    }
  }

  /** Element-wise reduction across ranks, in place on `buffer` (or into `output`). Every rank gets identical bits. */
  allReduce<T extends RingArray>(buffer: T, op: ReduceOp = 'sum', output?: T): Promise<T> {
    return this.#enqueue(() => collectives.allReduce(this, buffer, op, output ?? buffer)) as Promise<T>;
  }

  /** Rank-major concatenation of every rank's `input` (output length = n × input length). */
  allGather<T extends RingArray>(input: T, output?: T): Promise<T> {
    const out = output ?? new (input.constructor as new (n: number) => T)(input.length * this.n);
    return this.#enqueue(() => collectives.allGather(this, input, out)) as Promise<T>;
  }

  /** Copies `root`'s buffer into every rank's buffer. */
  broadcast<T extends RingArray>(buffer: T, root = 0): Promise<T> {
    return this.#enqueue(() => collectives.broadcast(this, buffer, root)) as Promise<T>;
  }

  /** Every rank sends `send` to rank+shift and receives `recv` from rank−shift (nccl-tests sendrecv with shift 1). */
  sendRecv<T extends RingArray>(send: T, recv: T, shift: 1 | -1 = 1): Promise<T> {
    return this.#enqueue(() => collectives.sendRecv(this, send, recv, shift)) as Promise<T>;
  }

  /** Point-to-point to a direct neighbour (the peer must call recv with this rank). */
  send(buffer: RingArray, peer: number): Promise<void> {
    return this.#enqueue(() => collectives.sendTo(this, buffer, peer)) as Promise<void>;
  }

  recv<T extends RingArray>(buffer: T, peer: number): Promise<T> {
    return this.#enqueue(() => collectives.recvFrom(this, buffer, peer)) as Promise<T>;
  }

  /** Returns once every rank has entered the barrier. */
  async barrier(): Promise<void> {
    const token = new Int32Array([1]);
    await this.allReduce(token, 'sum');
    if (token[0] !== this.n)
      throw new TorusError('TORUS_INTERNAL', `barrier counted ${token[0]} ranks, expected ${this.n}`);
  }

  /** Closes every connection; pending and later calls reject with TORUS_CHANNEL_CLOSED. Idempotent. */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    if (this.#watchdog) clearInterval(this.#watchdog);
    this.#current?.fail(new ClosedResourceError('ring communicator'));
    const closed = this.#links.all.map(
      (conn) =>
        new Promise<void>((resolve) => {
          if (conn.socket.closed) return resolve();
          conn.socket.once('close', () => resolve());
          conn.socket.end();
          setTimeout(() => conn.socket.destroy(), 1000).unref();
        }),
    );
    await Promise.all(closed);
  }

  // ---- RingContext ----

  begin(name: string): OpRun {
    const run = new OpRun(
      `rank ${this.rank} ${name}`,
      this.options.timeoutMs,
      (peer) => describePeer(this.options.hosts, peer),
      { fault: (conn, error) => this.#fault(conn, error), ended: (conn) => this.#ended.get(conn) },
    );
    this.#current = run;
    return run;
  }

  link(kind: 'writeRight' | 'writeLeft' | 'readLeft' | 'readRight', index: number): Conn {
    return this.#links[kind][index] as Conn;
  }

  lane(run: OpRun, plan: LanePlan, header: LaneHeader, sends: boolean, receives: boolean): LaneIO {
    const writer = this.link(plan.dir === 1 ? 'writeRight' : 'writeLeft', plan.connection);
    const reader = this.link(plan.dir === 1 ? 'readLeft' : 'readRight', plan.connection);
    if (sends) this.openWrite(run, writer, header);
    if (receives) this.openRead(run, reader, header);
    return {
      dir: plan.dir,
      send: (bytes) => this.write(run, writer, bytes),
      expect: (target, onDone) => run.expect(reader, target, onDone),
    };
  }

  openWrite(_run: OpRun, conn: Conn, header: LaneHeader): void {
    this.#framing.openWrite(conn, header);
  }

  write(run: OpRun, conn: Conn, bytes: Uint8Array): void {
    this.#framing.write(run, conn, bytes);
  }

  openRead(run: OpRun, conn: Conn, header: LaneHeader): void {
    this.#framing.openRead(run, conn, header);
  }

  async finish(run: OpRun): Promise<void> {
    this.#framing.flush(run);
    if (!this.#watchdog) {
      // One watchdog per communicator (not a timer per op: small collectives are latency-bound).
      this.#watchdog = setInterval(
        () => this.#current?.watch(),
        Math.max(5, Math.min(1000, this.options.timeoutMs / 4)),
      );
      this.#watchdog.unref();
    }
    run.start();
    try {
      await run.promise;
    } finally {
      if (this.#current === run) this.#current = null;
      this.#settleLost();
    }
  }

  /**
   * A peer whose connection ended while no op needed it breaks us once no op runs — quietly: it may just
   * have finished the last collective first, and ranks still finishing it must not be aborted. Later
   * calls reject naming it; abort frames go out only if another collective is asked for (#enqueue), so
   * a ring that goes on without the peer still fails everywhere naming it instead of timing out.
   */
  #settleLost(): void {
    if (!this.#lost || this.#current || this.#broken || this.#closing) return;
    this.#broken = this.#lost.error;
    this.#deferredAbort = this.#lost;
  }

  scratch(slot: string, bytes: number): Region {
    const have = this.#scratch.get(slot);
    if (have && have.bytes >= bytes) return have;
    if (have) this.memory.free(have);
    const region = this.memory.alloc(Math.max(bytes, have ? have.bytes * 2 : 0));
    this.#scratch.set(slot, region);
    return region;
  }

  // ---- internals ----

  #enqueue(fn: () => Promise<unknown>): Promise<unknown> {
    const next = this.#queue.then(() => {
      if (this.#broken) {
        const deferred = this.#deferredAbort;
        if (deferred) this.#teardown(deferred.conn, deferred.error);
        throw this.#broken;
      }
      if (this.#closing) throw new ClosedResourceError('ring communicator');
      return fn();
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  #watch(conn: Conn): void {
    // A close (FIN, or a reset from a peer that exited) may race with the last bytes of the op on the
    // peer's other connections: fail now only if the running op still needs this connection, else
    // after the op completes (#settleLost).
    watchConn(conn, this.options.hosts, {
      ended: (error) => {
        if (!this.#ended.has(conn)) this.#ended.set(conn, error);
        if (this.#current?.needs(conn)) this.#fault(conn, error);
        else this.#lost ??= { conn, error };
        if (!this.#current) this.#settleLost();
      },
      abort: (frame) => this.#onAbort(conn, frame),
      fault: (error) => this.#fault(conn, error),
    });
  }

  /**
   * A neighbour aborted. If it says we went silent, we know better (we are running): we are stalled behind
   * a peer we wait on, so name the one silent the longest, leaving out the reporter (it just spoke). A rank
   * that times out first may sit two hops from the stopped one; this puts the right name on the ring.
   */
  #onAbort(conn: Conn, frame: AbortFrame): void {
    if (frame.culprit === this.rank && frame.reason === 'timeout' && this.#current) {
      const run = this.#current;
      const stalled = run.longestSilent(new Set([frame.reporter]));
      if (stalled)
        return this.#fault(
          stalled.conn,
          run.silenceError(stalled.conn, stalled.idle, `; rank ${frame.reporter} timed out waiting on this rank`),
        );
    }
    this.#fault(conn, abortError(frame, this.options));
  }

  #fault(conn: Conn, error: TorusError): void {
    if (this.#closing || this.#broken) {
      this.#current?.fail(this.#broken ?? error); // already torn down: only the op still waiting is left to settle
      return;
    }
    this.#broken = error;
    this.#current?.fail(error);
    this.#teardown(conn, error);
  }

  #teardown(conn: Conn, error: TorusError): void {
    this.#deferredAbort = null;
    log.warn('ring peer failure', { rank: this.rank, peer: conn.peer, error });
    // Tell both neighbours who failed first (on the idle reverse direction of our dialed connections),
    // then close everything a moment later so the abort frames arrive before our FINs.
    const culprit = typeof error.details.peer === 'number' ? error.details.peer : conn.peer;
    const reason =
      error.code === 'TORUS_RING_TIMEOUT' ? 'timeout' : error.code === 'TORUS_PROTOCOL_INVALID' ? 'protocol' : 'lost';
    const abort = encodeRingFrame({ kind: 'abort', culprit, reporter: this.rank, reason });
    // A silent culprit is told too: it may be running, stalled behind another (#onAbort), and then names that one.
    const tellCulprit = reason === 'timeout';
    for (const c of this.#links.all) {
      c.reader?.clear();
      if (c.reader && (tellCulprit || c.peer !== culprit) && !c.socket.destroyed)
        c.socket.write(abort, () => undefined);
    }
    const all = this.#links.all;
    const timer = setTimeout(() => {
      for (const c of all) c.socket.destroy();
    }, 50);
    timer.unref();
    if (!tellCulprit) for (const c of all) if (c.peer === culprit) c.socket.destroy();
  }
}
