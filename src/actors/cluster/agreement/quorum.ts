/**
 * The quorum rule, pure. A node may start a term, win one, or keep leading (and so accept writes) only while it
 * reaches a quorum of the *last known membership*: the members its replicated state lists (written by the
 * leader as NodeJoined / NodeGone).
 *
 * Quorum = more than half of the members (counting itself when it is one), or exactly half when that half holds
 * the member with the lowest id (the deterministic tie-break: of two equal halves only one can hold it). Two
 * sides of a partition that agree on the membership can therefore never both have a quorum, so the side cut
 * off cannot sequence anything, and the merge can never replace work the other side committed.
 *
 * A node whose state lists no member yet (a fresh node, or one restarted without saved state) has no cluster to
 * be a minority of: it may form one (that is how clusters start; two lone starters merge by log rank).
 */
import { TorusError } from '../../../protocols/errors.js';
import type { Role } from '../../../protocols/peer-frames.js';

export interface QuorumVerdict {
  readonly ok: boolean;
  /** Members in the last known membership (0 = none known). */
  readonly members: number;
  /** Members this node reaches: itself (if a member) and its live peers that are members. */
  readonly reached: number;
  /** Members needed (the tie-break may let exactly half through: see `why`). */
  readonly needed: number;
  readonly why: string;
}

export function quorumOf(members: readonly string[], selfId: string, live: Iterable<string>): QuorumVerdict {
  const all = new Set(members);
  if (all.size === 0)
    return { ok: true, members: 0, reached: 0, needed: 0, why: 'no membership known yet: may form a cluster' };
  const reached = new Set<string>();
  if (all.has(selfId)) reached.add(selfId);
  for (const id of live) if (all.has(id)) reached.add(id);
  const n = all.size;
  const r = reached.size;
  const needed = Math.floor(n / 2) + 1;
  if (r >= needed) return { ok: true, members: n, reached: r, needed, why: `reaches ${r} of ${n} members` };
  const lowest = [...all].sort()[0]!;
  if (2 * r === n && reached.has(lowest)) {
    return {
      ok: true,
      members: n,
      reached: r,
      needed,
      why: `reaches exactly half (${r} of ${n}) including the lowest member id ${lowest}`,
    };
  }
  return {
    ok: false,
    members: n,
    reached: r,
    needed,
    why: `reaches ${r} of ${n} members, needs ${needed}${2 * r === n ? ` (or half with the lowest id ${lowest})` : ''}`,
  };
}

/**
 * Do `holders` (node ids holding an entry durably) form a quorum of `members`, by the same rule as above? With no
 * membership known yet (a fresh cluster forming) the leader's own copy is enough, as it is for its elections.
 */
export function holdsQuorum(members: readonly string[], selfId: string, holders: ReadonlySet<string>): boolean {
  if (members.length === 0) return holders.has(selfId);
  const all = new Set(members);
  let r = 0;
  for (const id of holders) if (all.has(id)) r++;
  if (2 * r > all.size) return true;
  return 2 * r === all.size && holders.has([...all].sort()[0]!);
}

export function sameVerdict(a: QuorumVerdict, b: QuorumVerdict): boolean {
  return a.ok === b.ok && a.members === b.members && a.reached === b.reached;
}

/** The error a write gets while this node has no leader and no quorum (it cannot get one by waiting here). */
export function noQuorumError(q: QuorumVerdict, leader: string | null, role: Role): TorusError | null {
  // While still discovering (just started) peers may yet show up: the request waits for a leader instead.
  if (q.ok || leader !== null || role === 'discovering') return null;
  return new TorusError(
    'TORUS_NO_QUORUM',
    `no quorum: this node ${q.why}; the cluster state is readable but takes no writes until a majority of its members is reachable`,
    { members: q.members, reached: q.reached, needed: q.needed },
  );
}
