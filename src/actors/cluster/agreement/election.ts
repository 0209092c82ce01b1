/**
 * Election and leadership for the agreement core (agreement.ts states the rules): the rank order, campaigns,
 * votes, and the heartbeats that settle who leads and whom to follow.
 */
import type { PeerFrame } from '../../../protocols/peer-frames.js';
import { emptyBuffer } from './ordered-buffer.js';
import { compareLogs, lastIndex, lastTerm } from './log.js';
import { requestCatchUp } from './replication.js';
import { learnCommit, onPersisted } from './commit.js';
import {
  announce,
  broadcast,
  enforceQuorum,
  follow,
  heartbeatFrame,
  loseLeader,
  saveVote,
  send,
  startResync,
  type Ctx,
} from './context.js';

/** Election order: positive when a should lead rather than b. */
function outranks(a: { lastIndex: number; lastTerm: number; startedAt: number; nodeId: string }, b: typeof a): boolean {
  const byLog = compareLogs(a, b);
  if (byLog !== 0) return byLog > 0;
  if (a.startedAt !== b.startedAt) return a.startedAt < b.startedAt;
  return a.nodeId < b.nodeId;
}

function selfRank(c: Ctx): { lastIndex: number; lastTerm: number; startedAt: number; nodeId: string } {
  return {
    lastIndex: lastIndex(c.s.log),
    lastTerm: lastTerm(c.s.log),
    startedAt: c.cfg.startedAt,
    nodeId: c.cfg.selfId,
  };
}

/** A leader is "still heard" for voting purposes only if it spoke within a few heartbeats. */
function hearsLeader(c: Ctx): boolean {
  if (c.s.role === 'leader') return true;
  return c.s.leader !== null && c.now - c.s.leaderContact < c.cfg.heartbeatMs * 3;
}

export function maybeCampaign(c: Ctx): void {
  if (!c.s.quorum.ok) return; // a minority never starts a term: it would outrank the majority's log on the heal
  if (c.s.mustJoin) return; // repaired or lost state: follow a leader first, never lead from a partial log
  const me = selfRank(c);
  const ahead = Object.values(c.s.peers).filter((p) => outranks(p, me)).length;
  // The rank stagger also counts after a retry delay: two nodes whose delays end together (both failed a campaign,
  // or both regained a quorum) must not campaign together in the same term again and again (a livelock).
  const slot = Math.max(c.s.noLeaderSince, c.s.retryAt) + ahead * c.cfg.electionStaggerMs;
  if (c.now >= slot) campaign(c);
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
  saveVote(c); // on disk before anyone hears of the campaign: a restart never campaigns or votes again in this term
  announce(c);
  broadcast(c, { type: 'vote-request', term: s.term, lastIndex: lastIndex(s.log), lastTerm: lastTerm(s.log) });
  checkWin(c);
}

export function giveUp(c: Ctx): void {
  c.s.role = 'follower';
  c.s.leader = null;
  c.s.votes = [];
  c.s.noLeaderSince = c.now;
  // Let every other node have its slot before this one tries again.
  c.s.retryAt = c.now + (Object.keys(c.s.peers).length + 1) * c.cfg.electionStaggerMs;
  announce(c);
}

export function checkWin(c: Ctx): void {
  if (!Object.keys(c.s.peers).every((id) => c.s.votes.includes(id))) return;
  if (!enforceQuorum(c)) return;
  const { s } = c;
  s.role = 'leader';
  s.leader = c.cfg.selfId;
  s.leaderSince = c.now;
  s.votes = [];
  s.gap = null;
  s.resync = null;
  s.match = {};
  s.buffer = emptyBuffer(lastIndex(s.log) + 1);
  c.won = true;
  announce(c);
  s.lastHeartbeatAt = c.now;
  broadcast(c, heartbeatFrame(c));
}

/** A leader that meets a newer term moves past it and re-announces, so followers converge on one leader. */
function leaderBumps(c: Ctx, seenTerm: number): void {
  c.s.term = Math.max(c.s.term, seenTerm) + 1;
  announce(c);
  c.s.lastHeartbeatAt = c.now;
  broadcast(c, heartbeatFrame(c));
}

export function onHeartbeat(c: Ctx, from: string, f: Extract<PeerFrame, { type: 'heartbeat' }>): void {
  const { s } = c;
  const peer = s.peers[from]!;
  s.peers[from] = {
    ...peer,
    term: f.term,
    role: f.role,
    leader: f.leader,
    lastIndex: f.lastIndex,
    lastTerm: f.lastTerm,
    lastHash: f.lastHash,
    commit: f.commit,
  };
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
      c.fx.push({
        kind: 'warn',
        msg: 'stepping down for a better-ranked leader',
        fields: { other: from, term: f.term },
      });
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
      c.fx.push({
        kind: 'warn',
        msg: 'not following a leader with a less complete log',
        fields: { leader: from, term: f.term, theirs: f.lastIndex, mine: mine.lastIndex },
      });
      send(c, from, heartbeatFrame(c));
      return;
    }
    follow(c, from, f.term);
    requestCatchUp(c, true);
    learnCommit(c, f.commit, f.commitHash);
    onPersisted(c, c.s.durable); // re-acknowledge: a lost ack, or a new leader that has not heard from us yet
  } else if (f.term < s.term && !hearsLeader(c)) {
    // We hold a newer term but no leader: tell it, it will move past our term and we can follow it.
    send(c, from, heartbeatFrame(c));
  }
}

export function onVoteRequest(c: Ctx, from: string, f: Extract<PeerFrame, { type: 'vote-request' }>): void {
  const { s } = c;
  const mine = { lastIndex: lastIndex(s.log), lastTerm: lastTerm(s.log) };
  if (s.role === 'leader' && compareLogs(f, mine) > 0) {
    // A candidate (so it has a quorum) holds a more complete log than ours, e.g. we restarted without our state
    // and led alone before meeting it: the most complete log must lead, so yield rather than hold it off forever.
    c.fx.push({
      kind: 'warn',
      msg: 'yielding to a candidate with a more complete log',
      fields: { candidate: from, theirs: f.lastIndex, mine: mine.lastIndex },
    });
    loseLeader(c, 'a candidate holds a more complete log');
    startResync(c);
  }
  let why: string | null = null;
  if (f.term < s.term) why = 'stale term';
  else if (hearsLeader(c)) why = 'a leader is alive';
  else if (s.mustJoin) why = 'this node repaired its saved state and has not caught up with a leader yet';
  else if (compareLogs(f, { lastIndex: lastIndex(s.log), lastTerm: lastTerm(s.log) }) < 0)
    why = 'candidate log is behind';
  else if (s.votedTerm === f.term && s.votedFor !== from) why = 'already voted in this term';
  if (why === null) {
    if (f.term > s.term && s.role !== 'discovering') s.role = 'follower';
    s.term = f.term;
    s.votedTerm = f.term;
    s.votedFor = from;
    s.votes = [];
    // Do not compete with the candidate we just voted for.
    s.retryAt = c.now + c.cfg.candidateTimeoutMs;
    saveVote(c); // before the grant leaves: a restart must not vote for someone else in this term
  } else if (s.role === 'leader' && f.term >= s.term) {
    leaderBumps(c, f.term);
  }
  send(c, from, {
    type: 'vote',
    term: s.term,
    granted: why === null,
    leader: hearsLeader(c) ? s.leader : null,
    lastIndex: lastIndex(s.log),
    lastTerm: lastTerm(s.log),
  });
}

export function onVote(c: Ctx, from: string, f: Extract<PeerFrame, { type: 'vote' }>): void {
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
