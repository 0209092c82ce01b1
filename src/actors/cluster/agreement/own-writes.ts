/**
 * What the leader writes on its own, decided inside the step (etcd's raft keeps them in the core too): the term's
 * first entry, the operator's pending removals and the membership events (membership.ts). The shell only persists,
 * sends and applies what comes out; the events themselves are made by the config's pure rules (types.ts,
 * LeaderWriteRules), so the core needs no knowledge of the replicated state's vocabulary.
 */
import type { EventBody, IndexedEnvelope } from '../../../protocols/peer-frames.js';
import { MAX_BATCH } from '../../../protocols/peer-frames.js';
import { appendEntries, lastIndex, lastTerm } from './log.js';
import { appendFrame, broadcast, enforceQuorum, type Ctx } from './context.js';
import { membershipChanges } from './membership.js';
import type { MemberRecord } from './types.js';

/** Reason written in the NodeGone of a member the operator removed. */
export const REMOVED_REASON = 'removed by the operator';

/** Appends `events` to the leader's log in its term: the shell persists them, the followers get them. */
export function appendAsLeader(c: Ctx, events: readonly EventBody[]): IndexedEnvelope[] {
  const first = lastIndex(c.s.log) + 1;
  const entries = events.map((event, k): IndexedEnvelope => ({ index: first + k, term: c.s.term, event, at: c.now }));
  if (entries.length === 0) return entries;
  c.s.log = appendEntries(c.s.log, entries);
  c.s.buffer = { next: lastIndex(c.s.log) + 1, pending: new Map() };
  // Applied only once committed (commit.ts): the shell writes them, fsyncs, and reports `persisted`.
  c.fx.push({ kind: 'persist', entries });
  for (let i = 0; i < entries.length; i += MAX_BATCH) broadcast(c, appendFrame(c, entries.slice(i, i + MAX_BATCH)));
  return entries;
}

/**
 * The leader's own writes after an input. `trigger`: `won` (this step won an election), `tick`, `joined` (a peer
 * joined) — the moments the membership can need an event; other inputs write nothing.
 */
export function ownWrites(c: Ctx, trigger: 'won' | 'tick' | 'joined'): void {
  const rules = c.cfg.writes;
  if (!rules || c.s.role !== 'leader') return;
  if (c.s.leadTerm !== c.s.term) {
    c.s.leadTerm = c.s.term;
    c.s.leadTermSince = c.now;
  }
  // A new term commits nothing of the earlier ones until an entry of its own commits: on winning, write one at once.
  // Only on winning: a leader that merely moves to a newer term (two leaders meeting) must not lengthen its log, or
  // the two would outrank each other in turn by their newest entry's term. Older-term entries stuck without an
  // own-term entry after them (the term moved without an election) get one once the term has settled.
  const stuck = c.s.commit < lastIndex(c.s.log) && c.now - c.s.leadTermSince >= c.cfg.heartbeatMs * 3;
  if (trigger === 'won' || (trigger === 'tick' && stuck)) termEntry(c);
  membership(c);
}

/** The term's first entry (LeaderElected in the product), at most once per term and only when the log lacks one. */
function termEntry(c: Ctx): void {
  const { s } = c;
  if (lastTerm(s.log) >= s.term || s.termEntryTerm === s.term) return;
  s.termEntryTerm = s.term;
  write(c, [{ event: c.cfg.writes!.termEntry(c.cfg.selfId) }]);
}

/** An event the leader writes, and what it changes in the membership the log lists. */
interface OwnWrite {
  readonly event: EventBody;
  readonly joins?: MemberRecord;
  readonly leaves?: string;
}

/** The operator's removals first (the membership rule would hold their NodeGone), then NodeJoined / NodeGone. */
function membership(c: Ctx): void {
  const { s, now } = c;
  const rules = c.cfg.writes!.membership;
  if (!rules) return;
  const due = s.removed.filter((id) => !s.removalWritten.includes(id));
  if (due.length > 0) {
    s.removalWritten = [...s.removalWritten, ...due];
    write(
      c,
      due.map((id) => ({ event: rules.gone(id, REMOVED_REASON), leaves: id })),
    );
  }
  const changes = membershipChanges({
    selfId: c.cfg.selfId,
    members: s.listed,
    now,
    failureTimeoutMs: c.cfg.failureTimeoutMs,
    freshMs: c.cfg.failureTimeoutMs / 2,
    live: [rules.self, ...Object.values(s.peers).flatMap((p) => p.descriptor ?? [])],
    lastHeard: s.lastHeard,
    leaderSince: s.leaderSince,
  });
  const held = changes.held ?? null;
  if (held && held !== s.goneHeld) c.fx.push({ kind: 'warn', msg: 'NodeGone held back', fields: { why: held } });
  s.goneHeld = held;
  write(c, [
    ...changes.joined.map((d) => ({
      event: rules.joined(d),
      joins: { nodeId: d.nodeId, incarnation: d.incarnation },
    })),
    ...changes.gone.map((g) => ({
      event: rules.gone(g.nodeId, `no heartbeat for ${g.silentMs} ms`),
      leaves: g.nodeId,
    })),
  ]);
}

/**
 * Appends the events that pass the rules' check (one that fails is dropped with a warning: it would fail to apply on
 * every node). What they change in the membership is listed at once, as the shell's next feed of the log's
 * membership will say: the rule never repeats an event, and the quorum counts the new membership at once.
 */
function write(c: Ctx, writes: readonly OwnWrite[]): void {
  const check = c.cfg.writes!.check;
  const ok = writes.filter(({ event }) => {
    if (!check) return true;
    try {
      check(event);
      return true;
    } catch (err) {
      c.fx.push({
        kind: 'warn',
        msg: 'leader event refused',
        fields: { type: event.type, reason: err instanceof Error ? err.message : String(err) },
      });
      return false;
    }
  });
  if (
    appendAsLeader(
      c,
      ok.map((w) => w.event),
    ).length === 0
  )
    return;
  if (!ok.some((w) => w.joins || w.leaves)) return;
  let listed = [...c.s.listed];
  for (const w of ok) {
    if (w.joins) listed = [...listed.filter((m) => m.nodeId !== w.joins!.nodeId), w.joins];
    if (w.leaves) listed = listed.filter((m) => m.nodeId !== w.leaves);
  }
  setListed(c, listed);
}

/** The log's membership changed: the counted members follow, and removals of members no longer listed are done. */
export function setListed(c: Ctx, listed: readonly MemberRecord[]): void {
  const { s } = c;
  const ids = new Set(listed.map((m) => m.nodeId));
  s.listed = [...listed].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
  s.removed = s.removed.filter((id) => ids.has(id));
  s.removalWritten = s.removalWritten.filter((id) => ids.has(id));
  s.members = [...ids].filter((id) => !s.removed.includes(id)).sort();
  enforceQuorum(c);
}

/** The operator removed `nodeId` while leaderless: it stops counting toward the quorum (written once this leads). */
export function markRemoved(c: Ctx, nodeId: string): void {
  if (!c.s.removed.includes(nodeId)) c.s.removed = [...c.s.removed, nodeId];
  setListed(c, c.s.listed);
}
