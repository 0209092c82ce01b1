/**
 * The leader's membership bookkeeping for ClusterNode: what each joined peer's hello said, and the NodeJoined /
 * NodeGone events the membership rule (membership.ts) calls for.
 */
import type { Logger } from '../../runtime/log.js';
import type { EventBody } from '../../protocols/peer-frames.js';
import { membershipChanges } from './agreement/membership.js';
import type { NodeDescriptor, ReplicatedState } from './agreement/replicated-state.js';

export interface ReconcileInput<S> {
  readonly state: S;
  readonly now: number;
  readonly self: NodeDescriptor;
  /** Ids of the joined peers. */
  readonly joined: Iterable<string>;
  readonly lastHeard: Readonly<Record<string, number>>;
  readonly leaderSince: number;
}

export class MembershipReconciler<S> {
  readonly #replica: ReplicatedState<S>;
  readonly #log: Logger;
  readonly #selfId: string;
  readonly #failureTimeoutMs: number;
  readonly #descriptors = new Map<string, NodeDescriptor>();
  #held: string | null = null;

  constructor(replica: ReplicatedState<S>, log: Logger, selfId: string, failureTimeoutMs: number) {
    this.#replica = replica;
    this.#log = log;
    this.#selfId = selfId;
    this.#failureTimeoutMs = failureTimeoutMs;
  }

  /** A peer joined: remember what its hello said. */
  noteJoined(descriptor: NodeDescriptor): void {
    this.#descriptors.set(descriptor.nodeId, descriptor);
  }

  /** Leader: NodeJoined for live nodes the state lacks (or knows under an older incarnation), NodeGone for silent ones. */
  events(i: ReconcileInput<S>): EventBody[] {
    const { joined, gone, held } = membershipChanges({
      selfId: this.#selfId,
      members: this.#replica.members(i.state),
      now: i.now,
      failureTimeoutMs: this.#failureTimeoutMs,
      freshMs: this.#failureTimeoutMs / 2,
      live: [i.self, ...[...i.joined].flatMap((id) => this.#descriptors.get(id) ?? [])],
      lastHeard: i.lastHeard,
      leaderSince: i.leaderSince,
    });
    if (held && held !== this.#held) this.#log.warn('NodeGone held back', { why: held });
    this.#held = held ?? null;
    return [
      ...joined.map((d) => this.#replica.joinedEvent(d)),
      ...gone.map((g) => this.#replica.goneEvent(g.nodeId, `no heartbeat for ${g.silentMs} ms`)),
    ];
  }
}
