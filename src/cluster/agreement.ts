/**
 * The agreement core: election, sequencing, failure detection. Rules (see docs/cluster.md):
 * - Rank: more complete log first (last term, then last index), then longest-lived (earliest start), then
 *   lowest id. With no live leader, the node ranked k-th among itself and its live peers campaigns k slots
 *   after it lost its leader, so the best node goes first and the most complete log survives.
 * - A candidate needs a grant from every live peer. A voter refuses when it still hears a leader, when the
 *   candidate's log is less complete than its own, or when it already voted in that term.
 * - Quorum (quorum.ts): a node that does not reach a quorum of the last known membership does not campaign, cannot
 *   win, and a leader that loses it steps down. So the side of a partition cut off from the majority sequences
 *   nothing, and on the heal it follows the majority's leader instead of replacing its log.
 * - Terms only grow. A leader that sees a higher term (or another leader it outranks) moves to a newer
 *   term and announces it; a leader outranked by another leader steps down.
 * - Leader-sequenced entries are final: followers apply strictly in order, buffer what is early, ask for
 *   gaps in bounded batches, and fetch a snapshot when they are new, diverged or failed to apply.
 */
import { MAX_BATCH, type EventBody, type IndexedEnvelope, type PeerFrame } from '../protocols/peer-frames.js';
import type { AgreementConfig, AgreementInput, AgreementState, Ready } from './agreement-types.js';
import { emptyBuffer } from './ordered-buffer.js';
import { appendEntries, compareLogs, emptyLog, GENESIS_HASH, lastIndex, lastTerm, type LogState } from './log.js';
import { onAppend, onGapRequest, onSnapshot, requestCatchUp } from './agreement-replication.js';
import { announce, broadcast, enforceQuorum, follow, heartbeatFrame, loseLeader, send, sendSnapshot, startResync, type Ctx } from './agreement-context.js';
import { quorumOf } from './quorum.js';

/** A starting node: an empty log, or the log restored from the data dir (state-store.ts). */
export function initialAgreement(now: number, log: LogState = emptyLog): AgreementState {
  return {
    role: 'discovering', term: lastTerm(log), leader: null, votedTerm: 0, votedFor: null, votes: [], candidateSince: 0, bootAt: now,
    leaderContact: 0, leaderSince: 0, noLeaderSince: now, retryAt: 0, lastHeartbeatAt: -Infinity, peers: {}, lastHeard: {},
    log, buffer: emptyBuffer(lastIndex(log) + 1), gap: null, resync: null, members: [], quorum: quorumOf([], '', []),
  };
}

export function step(cfg: AgreementConfig, state: AgreementState, input: AgreementInput): Ready {
  const c: Ctx = { cfg, now: input.now, s: { ...state, peers: { ...state.peers }, lastHeard: { ...state.lastHeard } }, fx: [] };
  let sequenced: IndexedEnvelope[] | undefined;
  switch (input.kind) {
    case 'tick': tick(c); break;
    case 'joined': joined(c, input.nodeId, input.incarnation, input.startedAt); break;
    case 'left': left(c, input.nodeId); break;
    case 'frame': frame(c, input.from, input.frame); break;
    case 'propose': sequenced = propose(c, input.events); break;
    case 'members':
      c.s.members = [...new Set(input.members)].sort();
      enforceQuorum(c);
      break;
    case 'apply-failed':
      c.fx.push({ kind: 'warn', msg: 'apply failed; fetching a snapshot', fields: { index: input.index, reason: input.reason } });
      startResync(c);
      break;
  }
  return sequenced ? { state: c.s, effects: c.fx, sequenced } : { state: c.s, effects: c.fx };
}

/** Election order: positive when a should lead rather than b. */
function outranks(a: { lastIndex: number; lastTerm: number; startedAt: number; nodeId: string }, b: typeof a): boolean {
  const byLog = compareLogs(a, b);
  if (byLog !== 0) return byLog > 0;
  if (a.startedAt !== b.startedAt) return a.startedAt < b.startedAt;
  return a.nodeId < b.nodeId;
}

function selfRank(c: Ctx): { lastIndex: number; lastTerm: number; startedAt: number; nodeId: string } {
  return { lastIndex: lastIndex(c.s.log), lastTerm: lastTerm(c.s.log), startedAt: c.cfg.startedAt, nodeId: c.cfg.selfId };
}

/** A leader is "still heard" for voting purposes only if it spoke within a few heartbeats. */
function hearsLeader(c: Ctx): boolean {
  if (c.s.role === 'leader') return true;
  return c.s.leader !== null && c.now - c.s.leaderContact < c.cfg.heartbeatMs * 3;
}

// ---- inputs ----

function tick(c: Ctx): void {
  const { s, cfg, now } = c;
  for (const [id, p] of Object.entries(s.peers)) {
    if (now - p.lastHeard <= cfg.failureTimeoutMs) continue;
    delete s.peers[id];
    c.fx.push({ kind: 'close', nodeId: id, reason: `no heartbeat for ${now - p.lastHeard} ms` });
    if (s.leader === id) loseLeader(c, 'leader timed out');
  }
  enforceQuorum(c);
  if (s.role === 'candidate') checkWin(c);
  if (now - s.lastHeartbeatAt >= cfg.heartbeatMs) {
    s.lastHeartbeatAt = now;
    broadcast(c, heartbeatFrame(c));
  }
  switch (s.role) {
    case 'discovering':
      if (now - s.bootAt >= cfg.settleMs) {
        s.role = 'follower';
        s.noLeaderSince = now;
        announce(c);
        maybeCampaign(c);
      }
      break;
    case 'follower':
      if (s.leader === null) maybeCampaign(c);
      else requestCatchUp(c);
      break;
    case 'candidate':
      if (now - s.candidateSince >= cfg.candidateTimeoutMs) {
        c.fx.push({ kind: 'warn', msg: 'campaign timed out', fields: { term: s.term, votes: s.votes } });
        giveUp(c);
      }
      break;
    case 'leader':
      break;
  }
}

function maybeCampaign(c: Ctx): void {
  if (!c.s.quorum.ok) return; // a minority never starts a term: it would outrank the majority's log on the heal
  const me = selfRank(c);
  const ahead = Object.values(c.s.peers).filter((p) => outranks(p, me)).length;
  const slot = c.s.noLeaderSince + ahead * c.cfg.electionStaggerMs;
  if (c.now >= slot && c.now >= c.s.retryAt) campaign(c);
}

function campaign(c: Ctx): void {
  const { s } = c;
  s.role = 'candidate';
  s.term += 1;
  s.votedTerm = s.term;
  s.votedFor = c.cfg.selfId;
  s.votes = [c.cfg.selfId];
  s.candidateSince = c.now;
  s.leader = null;
  announce(c);
  broadcast(c, { type: 'vote-request', term: s.term, lastIndex: lastIndex(s.log), lastTerm: lastTerm(s.log) });
  checkWin(c);
}

function giveUp(c: Ctx): void {
  c.s.role = 'follower';
  c.s.leader = null;
  c.s.votes = [];
  c.s.noLeaderSince = c.now;
  // Let every other node have its slot before this one tries again.
  c.s.retryAt = c.now + (Object.keys(c.s.peers).length + 1) * c.cfg.electionStaggerMs;
  announce(c);
}

function checkWin(c: Ctx): void {
  if (!Object.keys(c.s.peers).every((id) => c.s.votes.includes(id))) return;
  if (!enforceQuorum(c)) return;
  const { s } = c;
  s.role = 'leader';
  s.leader = c.cfg.selfId;
  s.leaderSince = c.now;
  s.votes = [];
  s.gap = null;
  s.resync = null;
  s.buffer = emptyBuffer(lastIndex(s.log) + 1);
  announce(c);
  s.lastHeartbeatAt = c.now;
  broadcast(c, heartbeatFrame(c));
}

function joined(c: Ctx, nodeId: string, incarnation: number, startedAt: number): void {
  c.s.peers[nodeId] = { nodeId, incarnation, startedAt, lastHeard: c.now, term: 0, role: 'discovering', leader: null, lastIndex: 0, lastTerm: 0, lastHash: GENESIS_HASH };
  c.s.lastHeard[nodeId] = c.now;
  enforceQuorum(c);
  send(c, nodeId, heartbeatFrame(c));
  if (c.s.role === 'candidate') send(c, nodeId, { type: 'vote-request', term: c.s.term, lastIndex: lastIndex(c.s.log), lastTerm: lastTerm(c.s.log) });
}

function left(c: Ctx, nodeId: string): void {
  if (!c.s.peers[nodeId]) return;
  delete c.s.peers[nodeId];
  if (c.s.leader === nodeId) loseLeader(c, 'leader connection closed');
  enforceQuorum(c);
  if (c.s.role === 'candidate') checkWin(c);
}

function propose(c: Ctx, events: readonly EventBody[]): IndexedEnvelope[] {
  if (c.s.role !== 'leader') {
    c.fx.push({ kind: 'warn', msg: 'propose on a non-leader ignored', fields: { role: c.s.role } });
    return [];
  }
  const first = lastIndex(c.s.log) + 1;
  const entries = events.map((event, k): IndexedEnvelope => ({ index: first + k, term: c.s.term, event, at: c.now }));
  c.s.log = appendEntries(c.s.log, entries, c.cfg.retainEntries);
  c.s.buffer = { next: lastIndex(c.s.log) + 1, pending: new Map() };
  for (const entry of entries) c.fx.push({ kind: 'apply', entry });
  for (let i = 0; i < entries.length; i += MAX_BATCH) broadcast(c, { type: 'append', term: c.s.term, entries: entries.slice(i, i + MAX_BATCH) });
  return entries;
}

function frame(c: Ctx, from: string, f: Extract<PeerFrame, { type: 'heartbeat' | 'vote-request' | 'vote' | 'append' | 'gap-request' | 'snapshot-request' | 'snapshot' }>): void {
  const peer = c.s.peers[from];
  if (!peer) {
    c.fx.push({ kind: 'warn', msg: 'frame from a peer that is not joined', fields: { from, type: f.type } });
    return;
  }
  c.s.peers[from] = { ...peer, lastHeard: c.now };
  c.s.lastHeard[from] = c.now;
  if (c.s.leader === from) c.s.leaderContact = c.now;
  switch (f.type) {
    case 'heartbeat': return onHeartbeat(c, from, f);
    case 'vote-request': return onVoteRequest(c, from, f);
    case 'vote': return onVote(c, from, f);
    case 'append': return onAppend(c, from, f);
    case 'gap-request': return onGapRequest(c, from, f);
    case 'snapshot-request':
      if (c.s.role === 'leader') sendSnapshot(c, from);
      return;
    case 'snapshot': return onSnapshot(c, from, f);
  }
}

/** A leader that meets a newer term moves past it and re-announces, so followers converge on one leader. */
function leaderBumps(c: Ctx, seenTerm: number): void {
  c.s.term = Math.max(c.s.term, seenTerm) + 1;
  announce(c);
  c.s.lastHeartbeatAt = c.now;
  broadcast(c, heartbeatFrame(c));
}

function onHeartbeat(c: Ctx, from: string, f: Extract<PeerFrame, { type: 'heartbeat' }>): void {
  const { s } = c;
  const peer = s.peers[from]!;
  s.peers[from] = { ...peer, term: f.term, role: f.role, leader: f.leader, lastIndex: f.lastIndex, lastTerm: f.lastTerm, lastHash: f.lastHash };
  if (f.role !== 'leader' || f.leader !== from) {
    // Our leader stepped down (lost its quorum, or yielded): stop following it, so our vote is free again.
    if (s.leader === from && s.role !== 'leader') loseLeader(c, 'the leader stepped down');
    // A leaderless peer in a newer term (a failed candidate) would never follow us: move past its term. A peer
    // that follows another leader is left alone; the two leaders settle it between them (below), by log.
    if (s.role === 'leader' && f.term > s.term && f.leader === null) leaderBumps(c, f.term);
    return;
  }
  if (s.role === 'leader') {
    // Two leaders (partition healed, or two lone starters): the better-ranked one stays.
    const me = selfRank(c);
    const other = { lastIndex: f.lastIndex, lastTerm: f.lastTerm, startedAt: peer.startedAt, nodeId: from };
    if (outranks(me, other)) {
      if (f.term >= s.term) leaderBumps(c, f.term);
    } else {
      c.fx.push({ kind: 'warn', msg: 'stepping down for a better-ranked leader', fields: { other: from, term: f.term } });
      if (f.term > s.term) follow(c, from, f.term);
      else loseLeader(c, 'outranked by another leader');
      // What this node sequenced alone is not in the winner's log: take the winner's state.
      startResync(c);
    }
    return;
  }
  if (f.term > s.term || (f.term === s.term && (s.leader === null || s.leader === from))) {
    // Never switch to a leader whose log is less complete than ours (a leader cut off in a partition that
    // comes back): the most complete log must survive.
    const mine = { lastIndex: lastIndex(s.log), lastTerm: lastTerm(s.log) };
    if (s.leader !== from && !s.resync && compareLogs(f, mine) < 0) {
      c.fx.push({ kind: 'warn', msg: 'not following a leader with a less complete log', fields: { leader: from, term: f.term, theirs: f.lastIndex, mine: mine.lastIndex } });
      send(c, from, heartbeatFrame(c));
      return;
    }
    follow(c, from, f.term);
    requestCatchUp(c, true);
  } else if (f.term < s.term && !hearsLeader(c)) {
    // We hold a newer term but no leader: tell it, it will move past our term and we can follow it.
    send(c, from, heartbeatFrame(c));
  }
}

function onVoteRequest(c: Ctx, from: string, f: Extract<PeerFrame, { type: 'vote-request' }>): void {
  const { s } = c;
  const mine = { lastIndex: lastIndex(s.log), lastTerm: lastTerm(s.log) };
  if (s.role === 'leader' && compareLogs(f, mine) > 0) {
    // A candidate (so it has a quorum) holds a more complete log than ours, e.g. we restarted without our state
    // and led alone before meeting it: the most complete log must lead, so yield rather than hold it off forever.
    c.fx.push({ kind: 'warn', msg: 'yielding to a candidate with a more complete log', fields: { candidate: from, theirs: f.lastIndex, mine: mine.lastIndex } });
    loseLeader(c, 'a candidate holds a more complete log');
    startResync(c);
  }
  let why: string | null = null;
  if (f.term < s.term) why = 'stale term';
  else if (hearsLeader(c)) why = 'a leader is alive';
  else if (compareLogs(f, { lastIndex: lastIndex(s.log), lastTerm: lastTerm(s.log) }) < 0) why = 'candidate log is behind';
  else if (s.votedTerm === f.term && s.votedFor !== from) why = 'already voted in this term';
  if (why === null) {
    if (f.term > s.term && s.role !== 'discovering') s.role = 'follower';
    s.term = f.term;
    s.votedTerm = f.term;
    s.votedFor = from;
    s.votes = [];
    // Do not compete with the candidate we just voted for.
    s.retryAt = c.now + c.cfg.candidateTimeoutMs;
  } else if (s.role === 'leader' && f.term >= s.term) {
    leaderBumps(c, f.term);
  }
  send(c, from, { type: 'vote', term: s.term, granted: why === null, leader: hearsLeader(c) ? s.leader : null, lastIndex: lastIndex(s.log), lastTerm: lastTerm(s.log) });
}

function onVote(c: Ctx, from: string, f: Extract<PeerFrame, { type: 'vote' }>): void {
  const { s } = c;
  if (s.role === 'leader') {
    if (f.term > s.term) leaderBumps(c, f.term);
    return;
  }
  if (s.role !== 'candidate') return;
  if (f.granted && f.term === s.term) {
    if (!s.votes.includes(from)) s.votes = [...s.votes, from];
    checkWin(c);
    return;
  }
  if (!f.granted) {
    c.fx.push({ kind: 'warn', msg: 'vote refused', fields: { by: from, term: f.term, leader: f.leader } });
    if (f.term > s.term) s.term = f.term;
    giveUp(c);
  }
}
