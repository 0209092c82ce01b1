/**
 * The leader's membership rule, pure: which nodes to announce (NodeJoined) and which to declare gone (NodeGone),
 * from the state's member list, the live (joined) nodes and when each node was last heard. Time is an input.
 */
import type { NodeDescriptor } from './replicated-state.js';

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
}

export interface MembershipChanges {
  readonly joined: readonly NodeDescriptor[];
  readonly gone: readonly { readonly nodeId: string; readonly silentMs: number }[];
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
  return { joined, gone };
}
