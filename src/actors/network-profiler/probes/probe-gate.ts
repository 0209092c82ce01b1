/**
 * Whether a throughput probe may run now on this node (protocols/probe.ts: probes are exclusive, like an iperf3
 * server). The gate is the one place that decides and counts: a transfer is admitted by taking a lease, and the
 * same call that says yes marks the gate busy, so no second caller can be admitted between "may I" and "I am".
 *
 * Busy means any of:
 * - a bulk transfer (sink, source or stream connection) holds a lease;
 * - a stream session was admitted and has not ended: its announced connections are not all in, or some are still
 *   open, and it has not expired (a client that announces four connections and opens one cannot hold the gate
 *   past its time bound plus a second);
 * - this node's own profiler (another thread) announced that it is sending, until the announcement's expiry, so a
 *   profiler that died mid-transfer cannot keep the sink busy.
 */
import { BroadcastChannel } from 'node:worker_threads';
import { probeBusyChannelName } from '../../../protocols/probe.js';

/** Held for the length of one admitted transfer; `release` is idempotent. */
export interface ProbeLease {
  release(): void;
}

interface StreamSession {
  readonly id: string;
  /** Connections the session announced and has not opened yet. */
  left: number;
  /** Connections of the session admitted and not yet released. */
  open: number;
  readonly until: number;
}

/** How long past its time bound an admitted stream session may hold the gate while its connections come in. */
const SESSION_GRACE_MS = 1000;

export class ProbeGate {
  #leases = 0;
  #selfUntil = 0;
  #session: StreamSession | undefined;
  readonly #now: () => number;

  constructor(nodeId: string, now: () => number = Date.now) {
    this.#now = now;
    const channel = new BroadcastChannel(probeBusyChannelName(nodeId));
    channel.onmessage = (m: unknown) => {
      const until = (m as { data?: { until?: unknown } }).data?.until;
      if (typeof until === 'number' && Number.isFinite(until)) this.#selfUntil = until;
    };
    channel.unref(); // never keeps a process alive
  }

  /** Transfers in progress here (diagnostics and tests). */
  get active(): number {
    return this.#leases;
  }

  busy(): boolean {
    return this.#leases > 0 || this.#now() < this.#selfUntil || this.#sessionHolds();
  }

  /** One bulk transfer (sink upload, source download): a lease when the gate is free or `force`, else null. */
  acquire(force: boolean): ProbeLease | null {
    if (this.busy() && !force) return null;
    return this.#lease(undefined);
  }

  /**
   * One connection of stream session `id` (of `streams` connections). The first connection takes the gate when it
   * is free (or forced) and the session then holds it for its other connections until they have all come and
   * gone, or the session expires (`ms` + a grace). Another session's connection is refused meanwhile.
   */
  admitStream(id: string, streams: number, force: boolean, ms: number): ProbeLease | null {
    const s = this.#session;
    if (s && s.id === id && s.left > 0 && this.#now() < s.until) {
      s.left--;
      return this.#lease(s);
    }
    if (this.busy() && !force) return null;
    const session: StreamSession = { id, left: streams - 1, open: 0, until: this.#now() + ms + SESSION_GRACE_MS };
    this.#session = session;
    return this.#lease(session);
  }

  #sessionHolds(): boolean {
    const s = this.#session;
    if (!s) return false;
    if (this.#now() >= s.until || (s.left === 0 && s.open === 0)) {
      this.#session = undefined;
      return false;
    }
    return true;
  }

  #lease(session: StreamSession | undefined): ProbeLease {
    this.#leases++;
    if (session) session.open++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.#leases--;
        if (session) session.open--;
      },
    };
  }
}
