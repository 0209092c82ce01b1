/**
 * The replicated state as saved in the data dir, pure: a snapshot (state + log position) and the log entries
 * applied after it, one JSON line each. `restoreStored` turns the two file texts back into a state and a log
 * position, validating everything; anything wrong gives a clear warning and, for the snapshot, an empty start
 * (the cluster then fills the node in as if it were new). The file I/O is in state-store.ts.
 */
import { ValidationError } from '../core/errors.js';
import type { IndexedEnvelope } from '../protocols/peer-frames.js';
import { appendEntries, emptyLog, lastHash, lastIndex, lastTerm, resetTo, type LogState } from './log.js';
import type { ReplicatedState } from './replicated-state.js';

export const STORED_VERSION = 1;

export interface StoredHeader {
  readonly v: typeof STORED_VERSION;
  /** Cluster name hash: a data dir reused for another cluster starts empty. */
  readonly cluster: string;
  readonly index: number;
  readonly lastTerm: number;
  readonly lastHash: string;
  readonly digest: string;
  readonly savedAt: number;
}

export interface StoredSnapshot extends StoredHeader {
  readonly state: unknown;
}

export interface Restored<S> {
  readonly state: S;
  /** The log as the agreement core continues it: the snapshot's position plus the replayed entries. */
  readonly log: LogState;
  /** Entries replayed from the log file (after the snapshot). */
  readonly replayed: number;
  readonly warnings: readonly string[];
  /** The snapshot text was unusable: the caller moves the file aside. */
  readonly badSnapshot: boolean;
}

export function encodeStored<S>(replica: ReplicatedState<S>, cluster: string, state: S, log: LogState, savedAt: number): string {
  const snap: StoredSnapshot = {
    v: STORED_VERSION, cluster, index: lastIndex(log), lastTerm: lastTerm(log), lastHash: lastHash(log),
    digest: replica.digest(state), savedAt, state: replica.encode(state),
  };
  return JSON.stringify(snap) + '\n';
}

export function encodeLogLine(entry: IndexedEnvelope): string {
  return JSON.stringify(entry) + '\n';
}

const isInt = (v: unknown, min = 0): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;

/** Strict header check (the state itself is checked by the replica's decoder and the digest). */
export function decodeStoredHeader(raw: unknown): StoredSnapshot {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ValidationError('config', 'snapshot', 'expected an object');
  const r = raw as Record<string, unknown>;
  for (const k of Object.keys(r)) if (!['v', 'cluster', 'index', 'lastTerm', 'lastHash', 'digest', 'savedAt', 'state'].includes(k)) throw new ValidationError('config', `snapshot.${k}`, 'unknown field');
  if (r.v !== STORED_VERSION) throw new ValidationError('config', 'snapshot.v', `expected version ${STORED_VERSION}`);
  if (typeof r.cluster !== 'string' || r.cluster.length > 64) throw new ValidationError('config', 'snapshot.cluster', 'expected a cluster hash');
  if (!isInt(r.index) || !isInt(r.lastTerm) || !isInt(r.savedAt)) throw new ValidationError('config', 'snapshot.index', 'expected non-negative integers (index, lastTerm, savedAt)');
  if (typeof r.lastHash !== 'string' || r.lastHash.length > 32 || typeof r.digest !== 'string' || r.digest.length > 128) throw new ValidationError('config', 'snapshot.lastHash', 'expected hash strings');
  return r as unknown as StoredSnapshot;
}

function decodeLogLine(line: string): IndexedEnvelope {
  const raw = JSON.parse(line) as unknown;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('not an object');
  const r = raw as Record<string, unknown>;
  const ev = r.event as Record<string, unknown> | null;
  if (!isInt(r.index, 1) || !isInt(r.term) || !ev || typeof ev !== 'object' || typeof ev.type !== 'string') throw new Error('expected {index, term, event}');
  if (r.at !== undefined && typeof r.at !== 'number') throw new Error('bad at');
  return r as unknown as IndexedEnvelope;
}

/**
 * Restores from the snapshot text (null: no file) and the log text (null: no file). Never throws: a bad
 * snapshot means an empty start with a warning; a bad log line ends the replay there with a warning (a torn
 * last line after a crash is expected and said so).
 */
export function restoreStored<S>(replica: ReplicatedState<S>, cluster: string, snapshotText: string | null, logText: string | null, retain: number): Restored<S> {
  const warnings: string[] = [];
  let state = replica.initial();
  let log: LogState = emptyLog;
  let badSnapshot = false;
  if (snapshotText !== null) {
    try {
      const snap = decodeStoredHeader(JSON.parse(snapshotText));
      if (snap.cluster !== cluster) {
        warnings.push(`saved state belongs to another cluster (hash ${snap.cluster}, this one ${cluster}): starting empty`);
        badSnapshot = true;
        return { state, log, replayed: 0, warnings, badSnapshot };
      }
      const decoded = replica.decode(snap.state);
      if (replica.digest(decoded) !== snap.digest) throw new ValidationError('config', 'snapshot.digest', 'digest does not match the state');
      state = decoded;
      log = resetTo(snap.index, snap.lastTerm, snap.lastHash);
    } catch (err) {
      warnings.push(`saved snapshot is corrupt (${(err as Error).message}): starting empty, the cluster will fill this node in`);
      return { state: replica.initial(), log: emptyLog, replayed: 0, warnings, badSnapshot: true };
    }
  }
  let replayed = 0;
  if (logText !== null && logText.length > 0) {
    const lines = logText.split('\n');
    const complete = logText.endsWith('\n');
    if (complete) lines.pop();
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const last = i === lines.length - 1;
      let entry: IndexedEnvelope;
      try {
        entry = decodeLogLine(line);
      } catch (err) {
        warnings.push(last && !complete
          ? `saved log ends in a partial line (a crash while writing): ${replayed} entries replayed, the rest comes from the cluster`
          : `saved log line ${i + 1} is corrupt (${(err as Error).message}): replay stopped after ${replayed} entries`);
        break;
      }
      if (entry.index <= lastIndex(log)) continue; // already in the snapshot (a crash between snapshot and log reset)
      if (entry.index !== lastIndex(log) + 1 || entry.term < lastTerm(log)) {
        warnings.push(`saved log line ${i + 1} does not follow (index ${entry.index} after ${lastIndex(log)}): replay stopped after ${replayed} entries`);
        break;
      }
      try {
        state = replica.apply(state, entry);
      } catch (err) {
        warnings.push(`saved log entry ${entry.index} does not apply (${(err as Error).message}): replay stopped after ${replayed} entries`);
        break;
      }
      log = appendEntries(log, [entry], retain);
      replayed++;
    }
  }
  return { state, log, replayed, warnings, badSnapshot };
}
