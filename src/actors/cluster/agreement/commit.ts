/**
 * Commit before acknowledge (docs/cluster.md, Commit): an entry is committed once a quorum of the members holds
 * it durably (the leader's own fsynced copy counts once the shell reports it; a follower counts with its
 * `append-ack`, checked against this log by chain hash). Only an entry of the leader's own term is counted
 * (Raft's rule: an older-term entry is committed by the first own-term entry after it, the `LeaderElected` the
 * shell writes on election), so a later leader can never overwrite it. Committed entries are applied in order
 * and then may be compacted; followers learn the commit index from the leader's heartbeats and appends.
 */
import { compactLog, entryAt, hashAt, lastIndex } from './log.js';
import { holdsQuorum } from './quorum.js';
import { startResync, type Ctx } from './context.js';

/** Emits `apply` for every entry in (commit, upTo] and compacts what is now both applied and old. */
function commitTo(c: Ctx, upTo: number): void {
  const { s } = c;
  const to = Math.min(upTo, lastIndex(s.log));
  if (to <= s.commit) return;
  for (let i = s.commit + 1; i <= to; i++) c.fx.push({ kind: 'apply', entry: entryAt(s.log, i)! });
  s.commit = to;
  s.log = compactLog(s.log, s.commit, c.cfg.retainEntries, c.cfg.retainBytes);
}

/** Leader: the highest own-term index a quorum of the members holds durably becomes committed. */
export function advanceCommit(c: Ctx): void {
  const { s } = c;
  if (s.role !== 'leader') return;
  for (let n = lastIndex(s.log); n > s.commit; n--) {
    const entry = entryAt(s.log, n);
    if (!entry || entry.term !== s.term) break; // older terms are committed through a newer entry only
    const holders = new Set<string>();
    if (s.durable >= n) holders.add(c.cfg.selfId);
    for (const [id, m] of Object.entries(s.match)) if (m >= n && s.peers[id]) holders.add(id);
    if (holdsQuorum(s.members, c.cfg.selfId, holders)) {
      commitTo(c, n);
      return;
    }
  }
}

/** Follower: the leader says `commit` (chain hash `hash` there) is committed; apply it if our log agrees. */
export function learnCommit(c: Ctx, commit: number, hash: string): void {
  const { s } = c;
  if (s.resync) return;
  if (commit === s.commit && s.mustJoin && hashAt(s.log, commit) === hash) s.mustJoin = false;
  if (commit <= s.commit) {
    // Our applied entries reach the leader's commit index: they must be the leader's there. Lone starters commit
    // alone (no membership yet), so a follower of the side that lost a merge applied entries the winner never
    // had; without this check it would keep that state until the winner's commit passed its own.
    const mine = hashAt(s.log, commit);
    if (mine !== undefined && mine !== hash) {
      c.fx.push({
        kind: 'warn',
        msg: 'applied entries differ from the leader at its commit index; fetching a snapshot',
        fields: { index: commit, applied: s.commit },
      });
      startResync(c, commit);
    }
    return;
  }
  const target = Math.min(commit, lastIndex(s.log));
  if (target <= s.commit) return;
  const mine = hashAt(s.log, target);
  if (target === commit) {
    if (mine === hash) {
      s.mustJoin = false; // caught up with a leader's committed log: a repaired node may vote and lead again
      return commitTo(c, target);
    }
    c.fx.push({
      kind: 'warn',
      msg: 'log differs from the leader at its commit index; fetching a snapshot',
      fields: { index: commit },
    });
    startResync(c, s.commit + 1); // our commit index was checked against a leader's chain: the difference is after it
  }
  // Shorter than the leader's commit: wait until the missing entries arrive (only then can the chain be checked).
}

/** Leader: a follower acknowledged its durable log up to `index`; counted only when it matches ours. */
export function onAppendAck(c: Ctx, from: string, index: number, hash: string, term: number): void {
  const { s } = c;
  if (s.role !== 'leader' || term !== s.term) return;
  const ours = hashAt(s.log, index);
  // A follower that reset (snapshot install) reports a lower index: take it as is, never keep a stale higher one.
  if (ours === hash) s.match = { ...s.match, [from]: index };
  else if (ours !== undefined) s.match = { ...s.match, [from]: Math.min(s.match[from] ?? 0, index - 1) };
  advanceCommit(c);
}

/** The shell's fsync covered the log up to `index`. A follower tells its leader; a leader counts itself. */
export function onPersisted(c: Ctx, index: number): void {
  const { s } = c;
  const durable = Math.min(index, lastIndex(s.log));
  if (durable <= s.durable && s.role === 'leader') return;
  s.durable = Math.max(s.durable, durable);
  if (s.role === 'leader') return advanceCommit(c);
  if (s.leader && s.leader !== c.cfg.selfId && !s.resync) {
    const hash = hashAt(s.log, s.durable);
    if (hash !== undefined)
      c.fx.push({ kind: 'send', to: s.leader, frame: { type: 'append-ack', term: s.term, index: s.durable, hash } });
  }
}
