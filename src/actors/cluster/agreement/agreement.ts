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
 * - Commit before acknowledge (commit.ts): the leader appends, followers store (fsync) and acknowledge;
 *   an entry is applied only once a quorum of the members holds it. Followers order what they receive, ask
 *   for gaps in bounded batches, and fetch a snapshot when they are new, diverged or failed to apply.
 * - Term and vote are saved (effect `save-vote`) before a vote is granted or a campaign starts.
 * - The leader's own writes (own-writes.ts) are decided here too: its term's first entry, the membership events and
 *   the operator's pending removals, from the rules in the config; the shell only persists, sends and applies.
 * Election and leadership live in election.ts, replication in replication.ts.
 */
import type { EventBody, IndexedEnvelope } from '../../../protocols/peer-frames.js';
import type { AgreementConfig, AgreementFrame, AgreementInput, AgreementState, Ready, SavedVote } from './types.js';
import { emptyBuffer } from './ordered-buffer.js';
import { emptyLog, GENESIS_HASH, lastIndex, lastTerm, type LogState } from './log.js';
import { onAppend, onGapRequest, onSnapshot, requestCatchUp } from './replication.js';
import {
  announce,
  broadcast,
  enforceQuorum,
  heartbeatFrame,
  loseLeader,
  send,
  sendSnapshot,
  startResync,
  type Ctx,
} from './context.js';
import { onAppendAck, onPersisted } from './commit.js';
import { checkWin, giveUp, maybeCampaign, onHeartbeat, onVote, onVoteRequest } from './election.js';
import { quorumOf } from './quorum.js';
import { appendAsLeader, markRemoved, ownWrites, setListed } from './own-writes.js';

export interface Restart {
  /** Everything up to here was applied (the state the shell restored is at this index). */
  readonly commit: number;
  readonly vote?: SavedVote | undefined;
  readonly mustJoin?: boolean;
}

/**
 * A starting node: an empty log, or the log restored from the data dir (state-store.ts): entries up to
 * `commit` are applied, the rest are held uncommitted until a leader says otherwise; the saved vote keeps the
 * node from voting twice in a term it already voted in.
 */
export function initialAgreement(
  now: number,
  log: LogState = emptyLog,
  restart: Restart = { commit: lastIndex(log) },
): AgreementState {
  const vote = restart.vote;
  return {
    role: 'discovering',
    term: Math.max(lastTerm(log), vote?.term ?? 0, vote?.votedTerm ?? 0),
    leader: null,
    votedTerm: vote?.votedTerm ?? 0,
    votedFor: vote?.votedFor ?? null,
    votes: [],
    candidateSince: 0,
    bootAt: now,
    leaderContact: 0,
    leaderSince: 0,
    noLeaderSince: now,
    retryAt: 0,
    lastHeartbeatAt: -Infinity,
    peers: {},
    lastHeard: {},
    log,
    buffer: emptyBuffer(lastIndex(log) + 1),
    gap: null,
    resync: null,
    listed: [],
    removed: [],
    removalWritten: [],
    members: [],
    quorum: quorumOf([], '', []),
    commit: Math.min(restart.commit, lastIndex(log)),
    durable: lastIndex(log),
    match: {},
    mustJoin: restart.mustJoin ?? false,
    termEntryTerm: 0,
    leadTerm: 0,
    leadTermSince: 0,
    goneHeld: null,
  };
}

export function step(cfg: AgreementConfig, state: AgreementState, input: AgreementInput): Ready {
  const c: Ctx = {
    cfg,
    now: input.now,
    s: { ...state, peers: { ...state.peers }, lastHeard: { ...state.lastHeard }, match: { ...state.match } },
    fx: [],
    won: false,
  };
  let sequenced: IndexedEnvelope[] | undefined;
  switch (input.kind) {
    case 'tick':
      tick(c);
      break;
    case 'joined':
      joined(c, input);
      break;
    case 'left':
      left(c, input.nodeId);
      break;
    case 'frame':
      frame(c, input.from, input.frame);
      break;
    case 'propose':
      sequenced = propose(c, input.events);
      break;
    case 'members':
      setListed(c, input.members);
      break;
    case 'remove':
      markRemoved(c, input.nodeId);
      break;
    case 'persisted':
      onPersisted(c, input.index);
      break;
    case 'apply-failed':
      c.fx.push({
        kind: 'warn',
        msg: 'apply failed; fetching a snapshot',
        fields: { index: input.index, reason: input.reason },
      });
      startResync(c);
      break;
  }
  if (c.won) ownWrites(c, 'won');
  else if (input.kind === 'tick' || input.kind === 'joined') ownWrites(c, input.kind);
  return sequenced ? { state: c.s, effects: c.fx, sequenced } : { state: c.s, effects: c.fx };
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

function joined(c: Ctx, input: Extract<AgreementInput, { kind: 'joined' }>): void {
  const { nodeId, incarnation, startedAt } = input;
  c.s.peers[nodeId] = {
    descriptor: input.descriptor,
    nodeId,
    incarnation,
    startedAt,
    lastHeard: c.now,
    term: 0,
    role: 'discovering',
    leader: null,
    lastIndex: 0,
    lastTerm: 0,
    lastHash: GENESIS_HASH,
    commit: 0,
  };
  c.s.lastHeard[nodeId] = c.now;
  delete c.s.match[nodeId]; // a new connection may be a restart without its old log: it acknowledges again
  enforceQuorum(c);
  send(c, nodeId, heartbeatFrame(c));
  if (c.s.role === 'candidate')
    send(c, nodeId, {
      type: 'vote-request',
      term: c.s.term,
      lastIndex: lastIndex(c.s.log),
      lastTerm: lastTerm(c.s.log),
    });
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
  return appendAsLeader(c, events);
}

function frame(c: Ctx, from: string, f: AgreementFrame): void {
  const peer = c.s.peers[from];
  if (!peer) {
    c.fx.push({ kind: 'warn', msg: 'frame from a peer that is not joined', fields: { from, type: f.type } });
    return;
  }
  c.s.peers[from] = { ...peer, lastHeard: c.now };
  c.s.lastHeard[from] = c.now;
  if (c.s.leader === from) c.s.leaderContact = c.now;
  switch (f.type) {
    case 'heartbeat':
      return onHeartbeat(c, from, f);
    case 'vote-request':
      return onVoteRequest(c, from, f);
    case 'vote':
      return onVote(c, from, f);
    case 'append':
      return onAppend(c, from, f);
    case 'append-ack':
      return onAppendAck(c, from, f.index, f.hash, f.term);
    case 'gap-request':
      return onGapRequest(c, from, f);
    case 'snapshot-request':
      if (c.s.role === 'leader') sendSnapshot(c, from);
      return;
    case 'snapshot':
      return onSnapshot(c, from, f);
  }
}
