/**
 * Types of the agreement core (leader election, log sequencing, catch-up, failure detection):
 * `step(state, input) → {state, effects}`, Ready-style, as in etcd's raft: the shell persists, then sends, then applies. Time arrives as `now` in inputs;
 * the core performs no I/O and reads no clock.
 */
import type { EventBody, IndexedEnvelope, PeerFrame, Role } from '../../../protocols/peer-frames.js';
import type { LogState } from './log.js';
import type { OrderedBuffer } from './ordered-buffer.js';
import type { QuorumVerdict } from './quorum.js';
import type { NodeDescriptor } from './state-machine.js';

export interface AgreementConfig {
  readonly selfId: string;
  /** Process start (ms since epoch): the election tie-break prefers the longest-lived node. */
  readonly startedAt: number;
  readonly heartbeatMs: number;
  /** A peer unheard this long is gone (connection closed, NodeGone by the leader). */
  readonly failureTimeoutMs: number;
  /** How long a starting node listens for an existing leader before it may campaign. */
  readonly settleMs: number;
  /** Delay between election slots: the best-ranked node campaigns first, the next one a slot later. */
  readonly electionStaggerMs: number;
  readonly candidateTimeoutMs: number;
  readonly gapRetryMs: number;
  /** Entries kept after they are applied, to answer gap requests; older ones live only in the snapshot. */
  readonly retainEntries: number;
  /** And at most this many bytes of them (entrySize): large entries are folded sooner. */
  readonly retainBytes: number;
  /** Most out-of-order entries held while waiting for a gap to fill. */
  readonly maxBuffered: number;
  /** What the leader writes on its own (leader-writes.ts); absent: it writes nothing but what is proposed. */
  readonly writes?: LeaderWriteRules | undefined;
}

/**
 * The events a leader writes on its own, as pure functions of the replicated state's vocabulary: the core decides
 * when (a won election, an older term's entries waiting, a node joined or went silent, an operator's removal).
 */
export interface LeaderWriteRules {
  /** The first entry of a term (changes nothing): committing it commits the earlier terms' entries. */
  termEntry(selfId: string): EventBody;
  /** Membership events; absent: the core writes none (a host that feeds its own, as transcript tests do). */
  readonly membership?:
    | {
        /** This node as its NodeJoined describes it. */
        readonly self: NodeDescriptor;
        joined(node: NodeDescriptor): EventBody;
        gone(nodeId: string, reason: string): EventBody;
      }
    | undefined;
  /** Throws when an event cannot be written (its shape, e.g. a peer's hello with an address no event takes). */
  check?(event: EventBody): void;
}

/** A member as the replicated state lists it. */
export interface MemberRecord {
  readonly nodeId: string;
  readonly incarnation: number;
}

/** 16 MiB of retained entries: 4096 entries of 4 KiB; a cluster with larger entries keeps fewer. */
export const DEFAULT_RETAIN_BYTES = 16 * 1024 * 1024;

export type Timings = Omit<AgreementConfig, 'selfId' | 'startedAt'>;

export const DEFAULT_TIMINGS: Timings = {
  heartbeatMs: 400,
  failureTimeoutMs: 3000,
  settleMs: 600,
  electionStaggerMs: 250,
  candidateTimeoutMs: 1000,
  gapRetryMs: 500,
  retainEntries: 4096,
  retainBytes: DEFAULT_RETAIN_BYTES,
  maxBuffered: 4096,
};

/** What this node knows about a joined peer (from its hello and its heartbeats). */
export interface PeerView {
  readonly nodeId: string;
  readonly incarnation: number;
  readonly startedAt: number;
  readonly lastHeard: number;
  readonly term: number;
  readonly role: Role;
  readonly leader: string | null;
  readonly lastIndex: number;
  readonly lastTerm: number;
  readonly lastHash: string;
  /** The peer's commit index, as its last heartbeat said. */
  readonly commit: number;
  /** What its hello said, for its NodeJoined (absent: not given, or no event can take it). */
  readonly descriptor?: NodeDescriptor | undefined;
}

export interface AgreementState {
  readonly role: Role;
  readonly term: number;
  readonly leader: string | null;
  readonly votedTerm: number;
  readonly votedFor: string | null;
  readonly votes: readonly string[];
  readonly candidateSince: number;
  readonly bootAt: number;
  /** Last frame from the current leader. */
  readonly leaderContact: number;
  readonly leaderSince: number;
  /** When this node last had no leader: election slots count from here. */
  readonly noLeaderSince: number;
  /** Earliest time for a new campaign after a failed one. */
  readonly retryAt: number;
  readonly lastHeartbeatAt: number;
  readonly peers: Readonly<Record<string, PeerView>>;
  /** Last time each node was heard, kept after it disconnects (the leader's NodeGone clock). */
  readonly lastHeard: Readonly<Record<string, number>>;
  readonly log: LogState;
  readonly buffer: OrderedBuffer;
  readonly gap: { readonly from: number; readonly to: number; readonly at: number } | null;
  /**
   * Waiting for a snapshot (new node, diverged log, or a failed apply). `keepBelow`: entries of this log from that
   * index on are known to differ from the leader's; those before it (after the snapshot) are kept over the install,
   * since this node may have acknowledged them (null: the log is not known to differ, keep all of it).
   */
  readonly resync: { readonly at: number; readonly keepBelow: number | null } | null;
  /** The membership the log lists (committed or not), fed by the shell when it changed; the leader's writes too. */
  readonly listed: readonly MemberRecord[];
  /** Members the operator removed while no leader could write their NodeGone: not counted toward the quorum. */
  readonly removed: readonly string[];
  /** Of those, the ones whose NodeGone this node sequenced as leader. */
  readonly removalWritten: readonly string[];
  /** The members that count toward the quorum: `listed` minus `removed`, sorted ids. */
  readonly members: readonly string[];
  /** Whether this node reaches a quorum of `members` (quorum.ts); without it, it neither starts nor keeps a term. */
  readonly quorum: QuorumVerdict;
  /** Highest index known committed (held durably by a quorum of the members); everything up to it is applied. */
  readonly commit: number;
  /** Highest index this node's own log holds on disk (the shell reports it after each group fsync). */
  readonly durable: number;
  /** Leader: the highest index each follower acknowledged as durable and matching this log (by chain hash). */
  readonly match: Readonly<Record<string, number>>;
  /** Restarted from a repaired or lost state: it may not campaign until it has followed a leader. */
  readonly mustJoin: boolean;
  /** The term whose first entry this node last wrote as leader (at most one per term). */
  readonly termEntryTerm: number;
  /** Leader: the term it leads in, and since when (an older term's entries wait that long for a settled term). */
  readonly leadTerm: number;
  readonly leadTermSince: number;
  /** Why the membership rule holds a NodeGone back (warned once per reason), or null. */
  readonly goneHeld: string | null;
}

/** What survives a restart besides the log (vote.json): a node never votes twice in one term. */
export interface SavedVote {
  readonly term: number;
  readonly votedTerm: number;
  readonly votedFor: string | null;
}

/** Frames the core consumes (the shell handles hello/auth/refuse/forward/peers itself). */
export type AgreementFrame = Extract<
  PeerFrame,
  {
    type:
      | 'heartbeat'
      | 'vote-request'
      | 'vote'
      | 'append'
      | 'append-ack'
      | 'gap-request'
      | 'snapshot-request'
      | 'snapshot';
  }
>;
export const AGREEMENT_FRAME_TYPES: readonly AgreementFrame['type'][] = [
  'heartbeat',
  'vote-request',
  'vote',
  'append',
  'append-ack',
  'gap-request',
  'snapshot-request',
  'snapshot',
];

export type AgreementInput =
  | { readonly kind: 'tick'; readonly now: number }
  | {
      readonly kind: 'joined';
      readonly now: number;
      readonly nodeId: string;
      readonly incarnation: number;
      readonly startedAt: number;
      /** What its hello said (the leader writes its NodeJoined from it). */
      readonly descriptor?: NodeDescriptor | undefined;
    }
  | { readonly kind: 'left'; readonly now: number; readonly nodeId: string }
  | { readonly kind: 'frame'; readonly now: number; readonly from: string; readonly frame: AgreementFrame }
  /** Leader only: sequence these (already validated) events. */
  | { readonly kind: 'propose'; readonly now: number; readonly events: readonly EventBody[] }
  /** The membership the log lists changed (after an append, an apply or a snapshot install). */
  | { readonly kind: 'members'; readonly now: number; readonly members: readonly MemberRecord[] }
  /**
   * The operator removed a dead member while there is no leader (member-removal.ts): it no longer counts toward
   * this node's quorum, and this node writes its NodeGone once it leads.
   */
  | { readonly kind: 'remove'; readonly now: number; readonly nodeId: string }
  /** The shell's group fsync finished: the saved log holds everything up to `index`. */
  | { readonly kind: 'persisted'; readonly now: number; readonly index: number }
  /** The shell could not apply an entry or install a snapshot: fetch a fresh snapshot. */
  | { readonly kind: 'apply-failed'; readonly now: number; readonly index: number; readonly reason: string };

/**
 * Effects, to be performed in array order. Contract: `apply` effects come in strictly increasing index
 * order and an `install` resets the state to the snapshot before any later `apply`; a `send-snapshot` must
 * be served from the state as of all `apply` effects before it.
 */
export type AgreementEffect =
  | { readonly kind: 'send'; readonly to: string; readonly frame: PeerFrame }
  /** Entries appended to the log (not yet committed): the shell writes them and reports `persisted` after fsync. */
  | { readonly kind: 'persist'; readonly entries: readonly IndexedEnvelope[] }
  /** Save term and vote durably before the frames that follow go out (a grant, a vote request). */
  | { readonly kind: 'save-vote'; readonly vote: SavedVote }
  /** A committed entry: apply it to the state. */
  | { readonly kind: 'apply'; readonly entry: IndexedEnvelope }
  | { readonly kind: 'install'; readonly snapshot: Extract<PeerFrame, { type: 'snapshot' }> }
  /** Send `to` a snapshot frame with these fields plus the shell's state (which is at `index`) and its digest. */
  | {
      readonly kind: 'send-snapshot';
      readonly to: string;
      readonly term: number;
      readonly index: number;
      readonly lastTerm: number;
      readonly lastHash: string;
    }
  | { readonly kind: 'close'; readonly nodeId: string; readonly reason: string }
  | { readonly kind: 'role'; readonly role: Role; readonly term: number; readonly leader: string | null }
  /** The quorum verdict changed (gained or lost, or the counts moved). */
  | { readonly kind: 'quorum'; readonly quorum: QuorumVerdict }
  | { readonly kind: 'warn'; readonly msg: string; readonly fields: Readonly<Record<string, unknown>> };

export interface Ready {
  readonly state: AgreementState;
  readonly effects: readonly AgreementEffect[];
  /** Entries sequenced by a `propose` (leader), so the shell can answer the proposer. */
  readonly sequenced?: readonly IndexedEnvelope[];
}
