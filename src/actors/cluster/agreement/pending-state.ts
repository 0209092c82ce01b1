/**
 * The replicated state as the log lists it: the committed state with the log's not-yet-committed entries applied
 * too. The core decides quorum on the membership the log lists (Raft's rule for configurations) and the leader's
 * membership reconciler must not repeat a NodeJoined that is only pending, so both read this. Cached: recomputed
 * only when the log or the committed state moved.
 */
import { entryAt, lastIndex } from './log.js';
import type { AgreementState } from './types.js';
import type { StateMachine } from './state-machine.js';

export class PendingState<S> {
  readonly #replica: StateMachine<S>;
  #spec: { commit: number; last: number; state: S; from: S } | null = null;

  constructor(replica: StateMachine<S>) {
    this.#replica = replica;
  }

  /** `state` is the committed state (at `core.commit`); returns it with the log's later entries applied. */
  of(core: AgreementState, state: S): S {
    const last = lastIndex(core.log);
    if (last <= core.commit) return state;
    const spec = this.#spec;
    if (spec && spec.from === state && spec.commit === core.commit && spec.last === last) return spec.state;
    let pending = spec && spec.from === state && spec.commit === core.commit && spec.last < last ? spec.state : state;
    const start = pending === state ? core.commit + 1 : spec!.last + 1;
    try {
      for (let i = start; i <= last; i++) pending = this.#replica.apply(pending, entryAt(core.log, i)!);
    } catch {
      return state; // an entry that does not apply will fail at commit too (and resync): use what is committed
    }
    this.#spec = { commit: core.commit, last, state: pending, from: state };
    return pending;
  }
}
