/** Follower-side replication and leader-side catch-up service of the agreement core (see agreement.ts). */
import { MAX_BATCH, type IndexedEnvelope, type PeerFrame } from '../../../protocols/peer-frames.js';
import { appendFrame, follow, heartbeatFrame, send, sendSnapshot, startResync, type Ctx } from './context.js';
import { learnCommit } from './commit.js';
import {
  appendEntries,
  entryAt,
  hashAt,
  lastHash,
  lastIndex,
  lastTerm,
  resetTo,
  sliceLog,
  type LogState,
} from './log.js';
import { drain, firstPending, ingest, skipTo } from './ordered-buffer.js';
import { sameEntry } from './entry-equality.js';

/**
 * Asks the leader for what this follower lacks: a snapshot when new or diverged, else the next bounded range.
 * `fresh` means the leader's view was just updated by its heartbeat: only then can "the leader has less than
 * me" mean divergence (between heartbeats our log legitimately runs ahead of the last heartbeat we saw).
 */
export function requestCatchUp(c: Ctx, fresh = false): void {
  const { s } = c;
  const leader = s.leader;
  if (!leader || leader === c.cfg.selfId) return;
  const view = s.peers[leader];
  if (!view) return;
  if (s.resync) {
    if (c.now - s.resync.at >= c.cfg.gapRetryMs * 2) startResync(c);
    return;
  }
  const mine = lastIndex(s.log);
  if (fresh && (view.lastIndex < mine || (view.lastIndex === mine && view.lastHash !== lastHash(s.log)))) {
    // Our log has entries the leader does not: it diverged under an older leader. Where: right after the leader's last
    // entry when our chain agrees there, else somewhere after our commit index (not known where).
    if (view.term === s.term)
      startResync(c, hashAt(s.log, view.lastIndex) === view.lastHash ? view.lastIndex + 1 : s.commit + 1);
    return;
  }
  const end = firstPending(s.buffer);
  const target = Math.max(view.lastIndex, end ?? 0);
  if (target <= mine) return;
  // A node with an empty log starts from the leader's snapshot, unless that is empty too (the leader committed
  // nothing yet, e.g. a cluster forming with several members): then it asks for the entries, or it would install
  // empty snapshots forever while the leader waits for its acknowledgement to commit anything (a deadlock).
  if (mine === 0 && view.commit > 0) return startResync(c);
  if (s.gap && c.now - s.gap.at < c.cfg.gapRetryMs) return;
  const to = Math.min(mine + MAX_BATCH, end === undefined ? target : end - 1);
  if (to <= mine) return;
  s.gap = { from: mine + 1, to, at: c.now };
  send(c, leader, { type: 'gap-request', from: mine + 1, to, prevHash: lastHash(s.log) });
}

export function onAppend(c: Ctx, from: string, f: Extract<PeerFrame, { type: 'append' }>): void {
  const { s } = c;
  if (f.term < s.term) {
    c.fx.push({
      kind: 'warn',
      msg: 'append from a stale term refused',
      fields: { from, term: f.term, current: s.term },
    });
    send(c, from, heartbeatFrame(c));
    return;
  }
  if (s.role === 'leader') {
    c.fx.push({ kind: 'warn', msg: 'append from another node while leader ignored', fields: { from, term: f.term } });
    return;
  }
  if (f.term > s.term || s.leader === null) follow(c, from, f.term);
  else if (s.leader !== from) {
    c.fx.push({
      kind: 'warn',
      msg: 'append from a node that is not the leader ignored',
      fields: { from, leader: s.leader },
    });
    return;
  }
  for (const entry of f.entries) {
    const mine = lastIndex(s.log);
    if (entry.index <= mine) {
      const held = entryAt(s.log, entry.index);
      if (!held) continue; // folded into our snapshot: nothing to compare
      if (held.term !== entry.term) {
        c.fx.push({
          kind: 'warn',
          msg: 'log diverged from the leader; fetching a snapshot',
          fields: { index: entry.index, mine: held.term, theirs: entry.term },
        });
        startResync(c, entry.index);
        return;
      }
      if (!sameEntry(held, entry))
        c.fx.push({
          kind: 'warn',
          msg: 'duplicate index with a different payload ignored',
          fields: { index: entry.index },
        });
      continue;
    }
    const r = ingest(s.buffer, entry, c.cfg.maxBuffered);
    s.buffer = r.buffer;
    if (r.outcome === 'conflict')
      c.fx.push({
        kind: 'warn',
        msg: 'duplicate index with a different payload ignored',
        fields: { index: entry.index },
      });
    if (r.outcome === 'full')
      c.fx.push({ kind: 'warn', msg: 'entry too far ahead dropped', fields: { index: entry.index } });
  }
  release(c);
  learnCommit(c, f.commit, f.commitHash);
  requestCatchUp(c);
}

/** Applies the consecutive run the buffer holds (unless a snapshot is awaited). */
function release(c: Ctx): void {
  const { s } = c;
  if (s.resync) return;
  const r = drain(s.buffer);
  s.buffer = r.buffer;
  if (r.ready.length === 0) return;
  let prevTerm = lastTerm(s.log);
  const good = [];
  for (const entry of r.ready) {
    if (entry.term < prevTerm) {
      c.fx.push({
        kind: 'warn',
        msg: 'entry with a term older than its predecessor; fetching a snapshot',
        fields: { index: entry.index, term: entry.term },
      });
      s.log = appendEntries(s.log, good);
      if (good.length > 0) c.fx.push({ kind: 'persist', entries: good });
      s.buffer = skipTo(s.buffer, lastIndex(s.log) + 1);
      // The leader's entries before this one have terms <= its term: ours with a newer term differ from them.
      startResync(c, firstNewerThan(s.log, entry.term));
      return;
    }
    prevTerm = entry.term;
    good.push(entry);
  }
  s.log = appendEntries(s.log, good);
  // Applied once the leader says they are committed; acknowledged once the shell's fsync covers them.
  c.fx.push({ kind: 'persist', entries: good });
  if (s.gap && lastIndex(s.log) >= s.gap.to) s.gap = null;
}

export function onGapRequest(c: Ctx, from: string, f: Extract<PeerFrame, { type: 'gap-request' }>): void {
  if (c.s.role !== 'leader') return;
  // The follower's log must match ours up to from - 1, else appending would stack entries on a diverged log.
  const ours = hashAt(c.s.log, f.from - 1);
  if (ours !== undefined && ours !== f.prevHash) {
    sendSnapshot(c, from);
    return;
  }
  const entries = sliceLog(c.s.log, f.from, f.to);
  if (entries === null) sendSnapshot(c, from);
  else if (entries.length > 0) send(c, from, appendFrame(c, entries));
}

/**
 * Entries of our log after a snapshot at `f.index` that survive its install (Raft's rule): entries this node may
 * have acknowledged beyond the leader's commit index (the leader's own fsync lagged, or a new leader has not learned
 * the commit index yet). Only entries proven to be the leader's stay: our chain must equal the leader's at its last
 * index as its latest heartbeat told (`leaderLast`; the chain covers the whole prefix), and they end before where our
 * log is known to differ (`keepBelow`). Unproven entries go, as before: two lone leaders of the same term can hold
 * different entries under equal terms, and a kept foreign suffix would never be acknowledged nor replaced.
 */
function keptOverSnapshot(
  log: LogState,
  f: { index: number },
  leaderLast: { lastIndex: number; lastHash: string } | undefined,
  keepBelow: number | null,
): IndexedEnvelope[] {
  if (!leaderLast || leaderLast.lastIndex <= f.index || hashAt(log, leaderLast.lastIndex) !== leaderLast.lastHash)
    return [];
  const to = Math.min(leaderLast.lastIndex, (keepBelow ?? Infinity) - 1);
  return to > f.index ? (sliceLog(log, f.index + 1, to) ?? []) : [];
}

/** The first index of the log whose entry has a term newer than `term` (the log's end + 1 when none). */
function firstNewerThan(log: LogState, term: number): number {
  for (let index = log.base + 1; index <= lastIndex(log); index++) if (entryAt(log, index)!.term > term) return index;
  return lastIndex(log) + 1;
}

export function onSnapshot(c: Ctx, from: string, f: Extract<PeerFrame, { type: 'snapshot' }>): void {
  const { s } = c;
  if (f.term < s.term || s.role === 'leader') {
    c.fx.push({
      kind: 'warn',
      msg: 'snapshot from a stale term or while leader ignored',
      fields: { from, term: f.term },
    });
    return;
  }
  if (f.term > s.term || s.leader === null) follow(c, from, f.term);
  else if (s.leader !== from) return;
  if (!s.resync && f.index <= lastIndex(s.log)) {
    // Already past it, unless our log is not the leader's: its chain differs at the snapshot, or the snapshot answers
    // our gap request from our log's end (the leader sends one there only when our chain does not match its own; a
    // compacted range would put the snapshot past our end). Lone starters commit alone, so the follower of a side
    // that lost a merge may have applied entries the leader never had, further than the leader has committed.
    const ours = hashAt(s.log, f.index);
    const differs = ours !== undefined && ours !== f.lastHash;
    const answersGap = s.gap !== null && s.gap.from === lastIndex(s.log) + 1;
    if (!differs && !answersGap) return;
    c.fx.push({
      kind: 'warn',
      msg: 'log is not the leader’s; installing its snapshot',
      fields: { index: f.index, last: lastIndex(s.log), applied: s.commit },
    });
  }
  c.fx.push({ kind: 'install', snapshot: f });
  s.log = appendEntries(
    resetTo(f.index, f.lastTerm, f.lastHash),
    keptOverSnapshot(s.log, f, s.peers[from], s.resync?.keepBelow ?? null),
  );
  // The snapshot is the leader's committed state; the shell saves it with the kept entries (its saved log) at once.
  s.commit = f.index;
  s.durable = f.index;
  s.mustJoin = false;
  s.buffer = skipTo(s.buffer, lastIndex(s.log) + 1);
  s.resync = null;
  s.gap = null;
  release(c);
}
