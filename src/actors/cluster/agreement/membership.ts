/**
 * The leader's membership rule, pure: which nodes to announce (NodeJoined) and which to declare gone (NodeGone),
 * from the state's member list, the live (joined) nodes and when each node was last heard. Time is an input.
 *
 * Shrinking the membership is what a quorum is counted against, so NodeGone is only written while the leader
 * hears a quorum of the *current* members recently (within `freshMs`, well inside the failure timeout). Without
 * this, a leader cut off from everyone would see its peers time out one by one and, still counting the not yet
 * timed-out ones, write the others gone until it was a quorum of one (quorum.ts).
 */
import { quorumOf } from './quorum.js';
import type { NodeDescriptor } from './state-machine.js';

export interface MembershipInput {
  readonly selfId: string;
  /** Members as the replicated state lists them. */
  readonly members: readonly { readonly nodeId: string; readonly incarnation: number }[];
  /** This node and every joined peer. */
  readonly live: readonly NodeDescriptor[];
  readonly lastHeard: Readonly<Record<string, number>>;
  /** When this node became leader: a member never heard by it gets this long as grace. */
  readonly leaderSince: number;
  readonly now: number;
  readonly failureTimeoutMs: number;
  /** A peer counts toward the quorum that allows NodeGone only if heard within this long. */
  readonly freshMs: number;
}

export interface MembershipChanges {
  readonly joined: readonly NodeDescriptor[];
  readonly gone: readonly { readonly nodeId: string; readonly silentMs: number }[];
  /** Why NodeGone is held back (no fresh quorum of the current members), when some node is due to go. */
  readonly held?: string;
}

export function membershipChanges(input: MembershipInput): MembershipChanges {
  const members = new Map(input.members.map((m) => [m.nodeId, m.incarnation]));
  const liveIds = new Set(input.live.map((d) => d.nodeId));
  // A live node the state lacks, or lists under an older process (a restart), is (re)announced.
  const joined = input.live.filter((d) => {
    const known = members.get(d.nodeId);
    return known === undefined || known < d.incarnation;
  });
  const gone: { nodeId: string; silentMs: number }[] = [];
  for (const id of members.keys()) {
    if (id === input.selfId || liveIds.has(id)) continue;
    const seen = input.lastHeard[id] ?? input.leaderSince;
    if (input.now - seen > input.failureTimeoutMs) gone.push({ nodeId: id, silentMs: Math.round(input.now - seen) });
  }
  if (gone.length === 0) return { joined, gone };
  const fresh = input.live
    .map((d) => d.nodeId)
    .filter((id) => id !== input.selfId && input.now - (input.lastHeard[id] ?? -Infinity) <= input.freshMs);
  const q = quorumOf([...members.keys()], input.selfId, fresh);
  if (!q.ok)
    return { joined, gone: [], held: `no recent quorum of the members: ${q.why} heard within ${input.freshMs} ms` };
  return { joined, gone };
}
