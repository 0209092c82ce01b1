/**
 * What ClusterNode writes as the leader on behalf of callers: proposals and commands, checked against the state,
 * sequenced and answered once committed. The leader's own writes (its term's first entry, membership, the
 * operator's pending removals) are decided by the agreement core (agreement/own-writes.ts).
 */
import { TorusError } from '../../protocols/errors.js';
import type { EventBody } from '../../protocols/peer-frames.js';
import type { AgreementInput, AgreementState } from './agreement/types.js';
import type { ClusterNodeOptions } from './cluster-node-options.js';
import type { CommitWaiters } from './commit-waiters.js';
import type { IndexedEnvelope } from '../../protocols/peer-frames.js';
import { isRemoveMember, REMOVED_REASON, removalRefusal, type RemovalView } from './member-removal.js';
import type { StateMachine } from './agreement/state-machine.js';

/** What the callers' writes need from the node. */
export interface LeaderHost<S> {
  readonly replica: StateMachine<S>;
  readonly waiters: CommitWaiters;
  readonly onCommand: ClusterNodeOptions<S>['onCommand'];
  core(): AgreementState;
  /** The committed state. */
  state(): S;
  removalView(): RemovalView;
  /** One agreement step (ClusterNode's loop); returns the entries a `propose` sequenced. */
  run(input: AgreementInput): readonly IndexedEnvelope[];
  now(): number;
}

export class LeaderWrites<S> {
  readonly #h: LeaderHost<S>;

  constructor(host: LeaderHost<S>) {
    this.#h = host;
  }

  /** Runs a caller's proposal or command on this node, the leader; resolves once its entries committed. */
  async execute(kind: 'propose' | 'command', body: EventBody | readonly EventBody[]): Promise<unknown> {
    const h = this.#h;
    if (kind === 'propose') return { indices: await this.#commit(Array.isArray(body) ? body : [body as EventBody]) };
    if (isRemoveMember(body as EventBody)) {
      const id = (body as EventBody & { nodeId: string }).nodeId;
      const refusal = removalRefusal(h.removalView(), id);
      if (refusal) throw refusal;
      return { outcome: { nodeId: id }, indices: await this.#commit([h.replica.goneEvent(id, REMOVED_REASON)]) };
    }
    if (!h.onCommand) throw new TorusError('TORUS_INTERNAL', 'this node has no command handler');
    const result = await h.onCommand(body as EventBody, h.state());
    if (h.core().role !== 'leader')
      throw new TorusError('TORUS_NO_LEADER', 'leadership moved while the command ran; retry');
    return { outcome: result.outcome ?? null, indices: await this.#commit(result.events) };
  }

  /** Sequences the events and answers once a quorum holds them (commit before acknowledge). */
  async #commit(events: readonly EventBody[]): Promise<number[]> {
    const indices = this.#sequence(events);
    if (indices.length === 0) return indices;
    await this.#h.waiters.wait({ index: indices.at(-1)!, term: this.#h.core().term, event: events.at(-1)! });
    return indices;
  }

  /** Checks the events apply (a bad one is refused, nothing is sequenced), then sequences them. */
  #sequence(events: readonly EventBody[]): number[] {
    const h = this.#h;
    const core = h.core();
    if (core.role !== 'leader') throw new TorusError('TORUS_NO_LEADER', 'not the leader', { retryable: true });
    if (events.length === 0) return [];
    const now = h.now();
    let trial = h.state();
    // The state is at the commit index (entries after it are not applied yet): the trial continues from there.
    const first = core.commit + 1;
    events.forEach((event, k) => {
      trial = h.replica.apply(trial, { index: first + k, term: core.term, event, at: now });
    });
    return h.run({ kind: 'propose', now, events }).map((e) => e.index);
  }
}
