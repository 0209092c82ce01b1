/**
 * Proposals and commands travel to the leader: run locally when this node leads, else forwarded with a
 * correlation id and answered by a forward-reply. A caller always gets an outcome or a TorusError: no leader
 * within the timeout, the leader lost before answering, or the leader's own error.
 */
import { asTorusError, errorFromJson, TorusError } from '../../../protocols/errors.js';
import type { EventBody, PeerFrame, Role } from '../../../protocols/peer-frames.js';

export interface CommandResult {
  readonly events: readonly EventBody[];
  readonly outcome?: unknown;
}

type Kind = 'propose' | 'command';
type RoleCb = (r: { role: Role; leader: string | null }) => void;

interface Pending {
  readonly to: string;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: TorusError) => void;
  readonly timer: NodeJS.Timeout;
}

export interface ForwarderOptions {
  readonly timeoutMs: number;
  readonly role: () => { role: Role; leader: string | null };
  /** Why a request cannot be served now and waiting will not help (e.g. no quorum), or null. */
  readonly blocked?: () => TorusError | null;
  readonly send: (to: string, frame: PeerFrame) => boolean;
  readonly execute: (kind: Kind, body: EventBody | readonly EventBody[]) => Promise<unknown>;
  readonly onRoleChange: (cb: RoleCb) => void;
  readonly offRoleChange: (cb: RoleCb) => void;
}

export class Forwarder<_S> {
  readonly #o: ForwarderOptions;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  constructor(options: ForwarderOptions) {
    this.#o = options;
  }

  /**
   * Runs on the leader, wherever it is. Retried (until the deadline) only when the request certainly did not run:
   * it could not be sent, or the receiver was no longer the leader. A leader lost after receiving it is an
   * error with unknown outcome, never silently retried (a command must not run twice).
   */
  async submit(kind: Kind, body: EventBody | readonly EventBody[]): Promise<unknown> {
    const deadline = Date.now() + this.#o.timeoutMs;
    for (;;) {
      try {
        return await this.#attempt(kind, body, deadline);
      } catch (err) {
        const retry = err instanceof TorusError && err.details.retryable === true && Date.now() < deadline - 50;
        if (!retry) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  async #attempt(kind: Kind, body: EventBody | readonly EventBody[], deadline: number): Promise<unknown> {
    const blocked = this.#o.blocked?.();
    if (blocked) throw blocked;
    const leader = await this.#awaitLeader(deadline);
    if (this.#o.role().role === 'leader') return this.#o.execute(kind, body);
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      const timer = setTimeout(
        () => {
          this.#pending.delete(id);
          reject(
            new TorusError(
              'TORUS_ACTOR_TIMEOUT',
              `the leader ${leader} did not answer within ${this.#o.timeoutMs} ms`,
              { leader },
            ),
          );
        },
        Math.max(1, deadline - Date.now()),
      );
      this.#pending.set(id, { to: leader, resolve, reject, timer });
      if (!this.#o.send(leader, { type: 'forward', id, kind, body })) {
        this.#settle(
          id,
          new TorusError('TORUS_NO_LEADER', `cannot reach the leader ${leader}`, { leader, retryable: true }),
        );
      }
    });
  }

  /** Leader side: run a forwarded request and answer it. */
  async serve(from: string, f: Extract<PeerFrame, { type: 'forward' }>): Promise<void> {
    try {
      if (this.#o.role().role !== 'leader')
        throw new TorusError('TORUS_NO_LEADER', 'this node is not the leader', {
          leader: this.#o.role().leader,
          retryable: true,
        });
      const outcome = await this.#o.execute(f.kind, f.body);
      this.#o.send(from, { type: 'forward-reply', id: f.id, ok: true, outcome: outcome ?? null });
    } catch (err) {
      this.#o.send(from, { type: 'forward-reply', id: f.id, ok: false, error: asTorusError(err).toJSON() });
    }
  }

  reply(from: string, f: Extract<PeerFrame, { type: 'forward-reply' }>): void {
    const p = this.#pending.get(f.id);
    if (!p || p.to !== from) return;
    if (f.ok) {
      clearTimeout(p.timer);
      this.#pending.delete(f.id);
      p.resolve(f.outcome);
    } else {
      this.#settle(f.id, errorFromJson(f.error));
    }
  }

  peerLost(nodeId: string): void {
    for (const [id, p] of this.#pending) {
      if (p.to === nodeId)
        this.#settle(
          id,
          new TorusError('TORUS_NO_LEADER', `the leader ${nodeId} was lost before answering; the outcome is unknown`, {
            leader: nodeId,
          }),
        );
    }
  }

  failAll(err: TorusError): void {
    for (const id of [...this.#pending.keys()]) this.#settle(id, err);
  }

  #settle(id: number, err: TorusError): void {
    const p = this.#pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    this.#pending.delete(id);
    p.reject(err);
  }

  #awaitLeader(deadline: number): Promise<string> {
    const now = this.#o.role();
    if (now.leader) return Promise.resolve(now.leader);
    return new Promise((resolve, reject) => {
      const cb: RoleCb = (r) => {
        const blocked = r.leader ? null : this.#o.blocked?.();
        if (blocked) {
          clearTimeout(timer);
          this.#o.offRoleChange(cb);
          reject(blocked);
          return;
        }
        if (!r.leader) return;
        clearTimeout(timer);
        this.#o.offRoleChange(cb);
        resolve(r.leader);
      };
      const timer = setTimeout(
        () => {
          this.#o.offRoleChange(cb);
          reject(new TorusError('TORUS_NO_LEADER', `no leader elected within ${this.#o.timeoutMs} ms`));
        },
        Math.max(1, deadline - Date.now()),
      );
      this.#o.onRoleChange(cb);
    });
  }
}
