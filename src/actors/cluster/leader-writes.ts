/**
 * What ClusterNode writes as the leader: callers' proposals and commands (sequenced, answered once committed), the
 * first entry of each term (LeaderElected, so earlier terms' entries commit), the membership events
 * (membership-reconciler.ts) and the operator's removals of dead members (member-removal.ts).
 */
import { TorusError } from '../../protocols/errors.js';
import type { Logger } from '../../runtime/log.js';
import type { EventBody, IndexedEnvelope } from '../../protocols/peer-frames.js';
import type { AgreementConfig, AgreementInput, AgreementState } from './agreement/types.js';
import type { ClusterNodeOptions } from './cluster-node-options.js';
import type { CommitWaiters } from './commit-waiters.js';
import { lastIndex, lastTerm } from './agreement/log.js';
import { isRemoveMember, REMOVED_REASON, removalRefusal, type RemovalView } from './member-removal.js';
import type { MembershipReconciler } from './membership-reconciler.js';
import type { NodeDescriptor, ReplicatedState } from './agreement/replicated-state.js';

/** What the leader's writes need from the node. */
export interface LeaderHost<S> {
  readonly nodeId: string;
  readonly replica: ReplicatedState<S>;
  readonly log: Logger;
  readonly cfg: AgreementConfig;
  readonly waiters: CommitWaiters;
  readonly membership: MembershipReconciler<S>;
  readonly onCommand: ClusterNodeOptions<S>['onCommand'];
  core(): AgreementState;
  /** The committed state. */
  state(): S;
  /** The state with the log's pending entries applied too (pending-state.ts). */
  pendingState(): S;
  self(): NodeDescriptor;
  joined(): Iterable<string>;
  removalView(): RemovalView;
  /** One agreement step (ClusterNode's loop); returns the entries a `propose` sequenced. */
  run(input: AgreementInput): readonly IndexedEnvelope[];
  now(): number;
}

export class LeaderWrites<S> {
  readonly #h: LeaderHost<S>;
  /** Members the operator removed while no leader could write their NodeGone (member-removal.ts). */
  readonly #removed = new Set<string>();
  /** Of those, the ones whose NodeGone this node (as leader) already sequenced. */
  readonly #removalWritten = new Set<string>();
  #termEntryWritten = 0;
  #seenTerm = 0;
  #termSince = 0;

  constructor(host: LeaderHost<S>) {
    this.#h = host;
  }

  /** No leader: this node stops counting `nodeId` toward its quorum; its NodeGone is written once this node leads. */
  markRemoved(nodeId: string): void {
    this.#removed.add(nodeId);
  }

  /** The members that count toward the quorum: those the log lists, minus the operator's pending removals. */
  counted(listed: readonly string[]): string[] {
    for (const id of this.#removed)
      if (!listed.includes(id)) {
        this.#removed.delete(id);
        this.#removalWritten.delete(id);
      }
    return listed.filter((id) => !this.#removed.has(id));
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

  /** Leader-written events (membership, the term's first entry): nobody waits for them. */
  #sequenceQuietly(events: readonly EventBody[]): void {
    try {
      this.#sequence(events);
    } catch (err) {
      this.#h.log.error('leader events refused', { err, types: events.map((e) => e.type) });
    }
  }

  /**
   * This node just became leader (or moved to a newer term as leader). A new term commits nothing of the earlier
   * ones until an entry of its own commits: on winning, write one at once. Only on winning: a leader that merely
   * moves to a newer term (two leaders meeting) must not lengthen its log, or the two would outrank each other in
   * turn by their newest entry's term. Membership next: proposals waiting for a leader resume in a microtask,
   * after this, so an event about this node (e.g. its profile) never lands before its NodeJoined.
   */
  becameLeader(won: boolean, now: number): void {
    if (won) this.#termEntry();
    this.reconcile(now);
  }

  /** Every tick while leading. */
  tick(now: number): void {
    const core = this.#h.core();
    if (core.term !== this.#seenTerm) {
      this.#seenTerm = core.term;
      this.#termSince = now;
    }
    // Older-term entries stuck without an own-term entry after them (the term moved without an election): write
    // one, once the term has settled (not while two leaders that just met are still sorting out who leads).
    if (core.commit < lastIndex(core.log) && now - this.#termSince >= this.#h.cfg.heartbeatMs * 3) this.#termEntry();
    this.reconcile(now);
  }

  /**
   * The leader's first entry of its term (LeaderElected). On winning, always; after moving to a newer term without an
   * election (two leaders meeting), only when entries of older terms wait to commit (they commit through it) — and at
   * most once per term, so that two leaders do not lengthen their logs in turn.
   */
  #termEntry(): void {
    const core = this.#h.core();
    if (core.role !== 'leader' || lastTerm(core.log) >= core.term || this.#termEntryWritten === core.term) return;
    this.#termEntryWritten = core.term;
    this.#sequenceQuietly([this.#h.replica.leaderEvent(this.#h.nodeId)]);
  }

  /** The membership events the state needs (membership-reconciler.ts), sequenced. */
  reconcile(now: number): void {
    const h = this.#h;
    // Members the operator removed while leaderless: their NodeGone first (the membership rule would hold it).
    const due = [...this.#removed].filter((id) => !this.#removalWritten.has(id));
    if (due.length > 0) {
      try {
        due.forEach((id) => this.#removalWritten.add(id));
        this.#sequence(due.map((id) => h.replica.goneEvent(id, REMOVED_REASON)));
      } catch (err) {
        h.log.error('operator removals refused', { err });
      }
    }
    const core = h.core();
    const events = h.membership.events({
      // The state as the log lists it, pending entries included: a NodeJoined not yet committed is not repeated.
      state: h.pendingState(),
      now,
      self: h.self(),
      joined: h.joined(),
      lastHeard: core.lastHeard,
      leaderSince: core.leaderSince,
    });
    if (events.length === 0) return;
    this.#sequenceQuietly(events);
  }
}
