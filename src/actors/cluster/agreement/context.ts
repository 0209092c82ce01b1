/** The mutable working copy one `step` call edits (the input state is never touched) and shared helpers. */
import type { IndexedEnvelope, PeerFrame } from '../../../protocols/peer-frames.js';
import type { AgreementConfig, AgreementEffect, AgreementState, PeerView } from './types.js';
import { hashAt, lastHash, lastIndex, lastTerm, termAt } from './log.js';
import { quorumOf, sameVerdict } from './quorum.js';

export type Draft = { -readonly [K in keyof AgreementState]: AgreementState[K] } & {
  peers: Record<string, PeerView>;
  lastHeard: Record<string, number>;
  match: Record<string, number>;
};

export interface Ctx {
  readonly cfg: AgreementConfig;
  readonly now: number;
  readonly s: Draft;
  readonly fx: AgreementEffect[];
  /** This step won an election (election.ts, checkWin): the leader writes its term's first entry. */
  won: boolean;
}

export function send(c: Ctx, to: string, frame: PeerFrame): void {
  c.fx.push({ kind: 'send', to, frame });
}

export function broadcast(c: Ctx, frame: PeerFrame): void {
  for (const id of Object.keys(c.s.peers).sort()) send(c, id, frame);
}

export function heartbeatFrame(c: Ctx): PeerFrame {
  return {
    type: 'heartbeat',
    term: c.s.term,
    role: c.s.role,
    leader: c.s.leader,
    lastIndex: lastIndex(c.s.log),
    lastTerm: lastTerm(c.s.log),
    lastHash: lastHash(c.s.log),
    ...commitInfo(c),
  };
}

/** The commit index with its chain hash, so a follower applies it only when its own log agrees there. */
export function commitInfo(c: Ctx): { commit: number; commitHash: string } {
  return { commit: c.s.commit, commitHash: hashAt(c.s.log, c.s.commit) ?? c.s.log.baseHash };
}

export function appendFrame(c: Ctx, entries: readonly IndexedEnvelope[]): PeerFrame {
  return { type: 'append', term: c.s.term, entries, ...commitInfo(c) };
}

/** Term and vote go to disk (the shell writes them before performing the effects after this one). */
export function saveVote(c: Ctx): void {
  c.fx.push({ kind: 'save-vote', vote: { term: c.s.term, votedTerm: c.s.votedTerm, votedFor: c.s.votedFor } });
}

export function announce(c: Ctx): void {
  c.fx.push({ kind: 'role', role: c.s.role, term: c.s.term, leader: c.s.leader });
}

export function follow(c: Ctx, leader: string, term: number): void {
  const changed = c.s.leader !== leader || c.s.term !== term || c.s.role !== 'follower';
  if (term > c.s.term) c.s.term = term;
  c.s.role = 'follower';
  c.s.leader = leader;
  c.s.leaderContact = c.now;
  c.s.votes = [];
  if (changed) {
    c.s.gap = null;
    announce(c);
  }
}

/**
 * Asks the leader for a snapshot. `divergedAt`: the first index where this log is known to differ from the
 * leader's (omitted: not known to differ, e.g. an apply failed). A retry keeps the lowest bound seen.
 */
export function startResync(c: Ctx, divergedAt: number | null = null): void {
  const known = c.s.resync?.keepBelow ?? null;
  const keepBelow = known === null ? divergedAt : divergedAt === null ? known : Math.min(known, divergedAt);
  c.s.resync = { at: c.now, keepBelow };
  c.s.gap = null;
  if (c.s.leader && c.s.leader !== c.cfg.selfId) send(c, c.s.leader, { type: 'snapshot-request' });
}

/**
 * The shell's state is at the commit index (only committed entries are applied): the snapshot is taken there.
 * The follower may drop what it holds beyond it (entries that differ from ours), so its acknowledgements beyond
 * the snapshot no longer count until it acknowledges again: no commit ever relies on an entry it dropped.
 */
export function sendSnapshot(c: Ctx, to: string): void {
  const at = c.s.commit;
  if ((c.s.match[to] ?? 0) > at) c.s.match[to] = at;
  c.fx.push({
    kind: 'send-snapshot',
    to,
    term: c.s.term,
    index: at,
    lastTerm: termAt(c.s.log, at) ?? c.s.log.baseTerm,
    lastHash: hashAt(c.s.log, at) ?? c.s.log.baseHash,
  });
}

/**
 * Recomputes the quorum verdict (after peers or members changed) and reports a change; a leader without a
 * quorum steps down, so it sequences nothing more. Returns whether this node has a quorum.
 */
export function enforceQuorum(c: Ctx): boolean {
  const q = quorumOf(c.s.members, c.cfg.selfId, Object.keys(c.s.peers));
  if (!sameVerdict(q, c.s.quorum)) {
    // Quorum regained (a partition healed): hear the peers' heartbeats before campaigning, so a live leader is
    // followed rather than disturbed by a needless election.
    if (q.ok && !c.s.quorum.ok) c.s.retryAt = Math.max(c.s.retryAt, c.now + c.cfg.heartbeatMs * 2);
    c.s.quorum = q;
    c.fx.push({ kind: 'quorum', quorum: q });
  }
  if (!q.ok && c.s.role === 'leader') loseLeader(c, `lost the quorum: ${q.why}`);
  return q.ok;
}

export function loseLeader(c: Ctx, why: string): void {
  if (c.s.role === 'discovering') return;
  const was = c.s.leader;
  c.s.role = 'follower';
  c.s.leader = null;
  c.s.votes = [];
  c.s.noLeaderSince = c.now;
  c.s.gap = null;
  c.fx.push({ kind: 'warn', msg: 'no leader', fields: { was, why } });
  announce(c);
}
