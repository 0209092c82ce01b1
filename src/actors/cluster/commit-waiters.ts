/**
 * The leader's callers waiting for their entries to commit (commit before acknowledge): a proposal or command
 * is answered only when its last entry is applied in the leader's own term. Losing the leadership or the quorum,
 * or the timeout, fails the caller instead: never a success for a write a quorum does not hold.
 */
import { TorusError } from '../../protocols/errors.js';
import type { IndexedEnvelope } from '../../protocols/peer-frames.js';
import type { QuorumVerdict } from './agreement/quorum.js';

interface Waiter {
  readonly term: number;
  readonly resolve: () => void;
  readonly reject: (e: TorusError) => void;
  readonly timer: NodeJS.Timeout;
}

export class CommitWaiters {
  readonly #byIndex = new Map<number, Waiter[]>();
  readonly #timeoutMs: number;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  get size(): number {
    return this.#byIndex.size;
  }

  /** Resolves once `entry` is committed (applied with the same term), rejects otherwise. */
  wait(entry: IndexedEnvelope): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#remove(entry.index, w);
        reject(
          new TorusError(
            'TORUS_NOT_COMMITTED',
            `not committed within ${this.#timeoutMs} ms: a quorum of the members did not acknowledge entry ${entry.index}; the write may still be committed or dropped`,
            { index: entry.index },
          ),
        );
      }, this.#timeoutMs);
      const w: Waiter = { term: entry.term, resolve, reject, timer };
      const list = this.#byIndex.get(entry.index) ?? [];
      list.push(w);
      this.#byIndex.set(entry.index, list);
    });
  }

  /** Entries just applied (committed): their waiters are answered. */
  applied(entries: readonly IndexedEnvelope[]): void {
    if (this.#byIndex.size === 0) return;
    for (const e of entries) {
      const list = this.#byIndex.get(e.index);
      if (!list) continue;
      this.#byIndex.delete(e.index);
      for (const w of list) {
        clearTimeout(w.timer);
        if (w.term === e.term) w.resolve();
        else
          w.reject(
            new TorusError(
              'TORUS_NOT_COMMITTED',
              `entry ${e.index} was replaced by a newer leader's log: the write was not committed`,
              { index: e.index },
            ),
          );
      }
    }
  }

  /** This node is no longer the leader: nobody waiting can be answered with a success by it. */
  leadershipLost(q: QuorumVerdict): void {
    if (this.#byIndex.size === 0) return;
    this.failAll(
      q.ok
        ? new TorusError(
            'TORUS_NOT_COMMITTED',
            'this node stopped leading before a quorum of the members held the write: not committed (a new leader may still commit it, or drop it)',
          )
        : new TorusError('TORUS_NO_QUORUM', `no quorum: this node ${q.why}; the write was not committed`, {
            members: q.members,
            reached: q.reached,
            needed: q.needed,
          }),
    );
  }

  failAll(err: TorusError): void {
    for (const list of this.#byIndex.values())
      for (const w of list) {
        clearTimeout(w.timer);
        w.reject(err);
      }
    this.#byIndex.clear();
  }

  #remove(index: number, w: Waiter): void {
    const list = this.#byIndex.get(index)?.filter((x) => x !== w);
    if (list && list.length > 0) this.#byIndex.set(index, list);
    else this.#byIndex.delete(index);
  }
}
