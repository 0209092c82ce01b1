/**
 * The state machine the cluster replicates, seen from the agreement shell: a pure fold of indexed events with a digest and
 * a snapshot codec, plus the events the leader writes itself (its term's first entry, NodeJoined, NodeGone). `topologyReplica` (topology-state.ts)
 * is the product one; tests may plug in smaller ones.
 */
import type { EventBody, IndexedEnvelope } from '../../../protocols/peer-frames.js';

export interface NodeDescriptor {
  readonly nodeId: string;
  readonly name: string;
  readonly incarnation: number;
  readonly apiPort: number;
  readonly peerPort: number;
  readonly version: string;
  readonly addresses: readonly string[];
}

export interface StateMachine<S> {
  initial(): S;
  /** Pure; throws (ValidationError or an order error) when the entry cannot be applied. Never mutates `state`. */
  apply(state: S, entry: IndexedEnvelope): S;
  digest(state: S): string;
  /** Snapshot payload for the wire, and its strict decoder (throws on anything invalid). */
  encode(state: S): unknown;
  decode(raw: unknown): S;
  /** Nodes the state currently lists as members. */
  members(state: S): readonly { readonly nodeId: string; readonly incarnation: number }[];
  joinedEvent(node: NodeDescriptor): EventBody;
  goneEvent(nodeId: string, reason: string): EventBody;
  /** The first entry a new leader writes in its term (changes nothing): committing it commits what came before. */
  leaderEvent(nodeId: string): EventBody;
  /**
   * Throws when an event can never apply, whatever the state (its shape): the leader checks the events it writes on
   * its own with it, since a peer's hello may carry what no NodeJoined takes. Absent: every event is taken.
   */
  check?(event: EventBody): void;
}
