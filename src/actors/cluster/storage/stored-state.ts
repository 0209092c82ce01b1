/**
 * The replicated state as saved in the data dir, pure: a snapshot (the applied state + its log position), the
 * snapshot before it, and the log records after the older one, each line `<crc32 hex> <json>`: an entry
 * `{index, term, event, at?}` or a commit mark `{commit}`. `restoreStored` turns the file texts back into a state
 * (applied up to the last commit mark), the log (committed and not yet committed entries) and the commit index.
 * Damage is never skipped: a record that fails its checksum, its shape or its order, or a snapshot that cannot be
 * decoded and is not covered by the older snapshot plus the log, throws StateCorruptError naming the file, the
 * record and the byte offset. Only a last line without its newline (a write cut by a crash: never fsynced, so
 * never acknowledged) is dropped, with a warning. The file I/O is in state-store.ts.
 */
import { crc32 } from 'node:zlib';
import { TorusError, ValidationError } from '../../../protocols/errors.js';
import type { IndexedEnvelope } from '../../../protocols/peer-frames.js';
import {
  appendEntries,
  compactLog,
  emptyLog,
  hashAt,
  lastHash,
  lastIndex,
  lastTerm,
  resetTo,
  termAt,
  type LogState,
} from '../agreement/log.js';
import type { StateMachine } from '../agreement/state-machine.js';

export const STORED_VERSION = 1;
export const SNAPSHOT_FILE = 'snapshot.json';
export const PREV_SNAPSHOT_FILE = 'snapshot.prev.json';
export const LOG_FILE = 'log.jsonl';

export interface StoredHeader {
  readonly v: typeof STORED_VERSION;
  /** Cluster name hash: a data dir of another cluster is refused. */
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
  /** The state with every committed entry the files hold applied (at `commit`). */
  readonly state: S;
  /** The log as the agreement core continues it, including entries not known to be committed. */
  readonly log: LogState;
  readonly commit: number;
  /** Entries replayed from the log file onto the snapshot. */
  readonly replayed: number;
  readonly warnings: readonly string[];
  /** Index of the snapshot the state was built on (the log file holds entries after the older snapshot). */
  readonly snapshotIndex: number;
}

/** Where a saved file is damaged: the node refuses to start and says how to recover. */
export class StateCorruptError extends TorusError {
  constructor(
    readonly file: string,
    readonly record: number | null,
    readonly offset: number | null,
    detail: string,
  ) {
    super(
      'TORUS_STATE_CORRUPT',
      `saved cluster state is damaged: ${file}${record !== null ? ` record ${record}` : ''}${offset !== null ? ` at byte offset ${offset}` : ''}: ${detail}. ` +
        'The node refuses to start rather than drop what it cannot read. To recover, start it once with --repair-state: it keeps the readable ' +
        'part, moves the rest aside (next to the file, named *.damaged-<time>), and catches up from the cluster leader before it votes or leads.',
      { file, record, offset, detail },
    );
  }
}

export function encodeStored<S>(
  replica: StateMachine<S>,
  cluster: string,
  state: S,
  at: { index: number; lastTerm: number; lastHash: string },
  savedAt: number,
): string {
  const snap: StoredSnapshot = {
    v: STORED_VERSION,
    cluster,
    index: at.index,
    lastTerm: at.lastTerm,
    lastHash: at.lastHash,
    digest: replica.digest(state),
    savedAt,
    state: replica.encode(state),
  };
  return `${JSON.stringify(snap)}\n`;
}

function record(json: string): string {
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

export function encodeLogLine(entry: IndexedEnvelope): string {
  return record(JSON.stringify(entry));
}

export function encodeCommitLine(commit: number): string {
  return record(JSON.stringify({ commit }));
}

const isInt = (v: unknown, min = 0): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;

/** Strict header check (the state itself is checked by the replica's decoder and the digest). */
export function decodeStoredHeader(raw: unknown): StoredSnapshot {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new ValidationError('config', 'snapshot', 'expected an object');
  const r = raw as Record<string, unknown>;
  for (const k of Object.keys(r))
    if (!['v', 'cluster', 'index', 'lastTerm', 'lastHash', 'digest', 'savedAt', 'state'].includes(k))
      throw new ValidationError('config', `snapshot.${k}`, 'unknown field');
  if (r.v !== STORED_VERSION) throw new ValidationError('config', 'snapshot.v', `expected version ${STORED_VERSION}`);
  if (typeof r.cluster !== 'string' || r.cluster.length > 64)
    throw new ValidationError('config', 'snapshot.cluster', 'expected a cluster hash');
  if (!isInt(r.index) || !isInt(r.lastTerm) || !isInt(r.savedAt))
    throw new ValidationError('config', 'snapshot.index', 'expected non-negative integers (index, lastTerm, savedAt)');
  if (typeof r.lastHash !== 'string' || r.lastHash.length > 32 || typeof r.digest !== 'string' || r.digest.length > 128)
    throw new ValidationError('config', 'snapshot.lastHash', 'expected hash strings');
  return r as unknown as StoredSnapshot;
}

type LogRecord =
  | { readonly kind: 'entry'; readonly entry: IndexedEnvelope }
  | { readonly kind: 'commit'; readonly commit: number };

function decodeRecord(line: string): LogRecord {
  const m = /^([0-9a-f]{8}) (.*)$/s.exec(line);
  if (!m) throw new Error('not a `<crc32> <json>` record');
  if (crc32(m[2]!).toString(16).padStart(8, '0') !== m[1]) throw new Error('checksum mismatch');
  const raw = JSON.parse(m[2]!) as unknown;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('not an object');
  const r = raw as Record<string, unknown>;
  if (Object.keys(r).length === 1 && isInt(r.commit)) return { kind: 'commit', commit: r.commit };
  const ev = r.event as Record<string, unknown> | null;
  if (!isInt(r.index, 1) || !isInt(r.term) || !ev || typeof ev !== 'object' || typeof ev.type !== 'string')
    throw new Error('expected {index, term, event} or {commit}');
  if (r.at !== undefined && typeof r.at !== 'number') throw new Error('bad at');
  return { kind: 'entry', entry: r as unknown as IndexedEnvelope };
}

export interface ParsedLog {
  readonly records: readonly { readonly record: LogRecord; readonly offset: number }[];
  /** Byte length of the complete records (a torn last line starts here). */
  readonly validBytes: number;
  readonly torn: boolean;
}

/** Reads every record, checking checksum, shape and order; throws StateCorruptError at the first bad one. */
export function parseLog(text: string, file = LOG_FILE): ParsedLog {
  const records: { record: LogRecord; offset: number }[] = [];
  let offset = 0; // bytes
  let pos = 0; // characters
  let prev: number | null = null;
  let n = 0;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    if (nl < 0) return { records, validBytes: offset, torn: true }; // cut by a crash before its fsync
    const line = text.slice(pos, nl);
    n++;
    let rec: LogRecord;
    try {
      rec = decodeRecord(line);
    } catch (err) {
      throw new StateCorruptError(file, n, offset, (err as Error).message);
    }
    if (rec.kind === 'entry') {
      if (prev !== null && rec.entry.index !== prev + 1)
        throw new StateCorruptError(file, n, offset, `entry ${rec.entry.index} does not follow entry ${prev}`);
      prev = rec.entry.index;
    }
    records.push({ record: rec, offset });
    offset += Buffer.byteLength(line) + 1;
    pos = nl + 1;
  }
  return { records, validBytes: offset, torn: false };
}

interface Base<S> {
  readonly state: S;
  readonly index: number;
  readonly lastTerm: number;
  readonly lastHash: string;
}

function decodeSnapshot<S>(replica: StateMachine<S>, cluster: string, text: string, file: string): Base<S> {
  let snap: StoredSnapshot;
  try {
    snap = decodeStoredHeader(JSON.parse(text));
  } catch (err) {
    throw new StateCorruptError(file, null, null, (err as Error).message);
  }
  if (snap.cluster !== cluster) {
    throw new TorusError(
      'TORUS_STATE_CORRUPT',
      `${file} belongs to another cluster (hash ${snap.cluster}, this one ${cluster}): use another --data-dir, or remove its cluster-state directory to join this cluster as a new node`,
      { file },
    );
  }
  try {
    const state = replica.decode(snap.state);
    if (replica.digest(state) !== snap.digest) throw new Error('digest does not match the state');
    return { state, index: snap.index, lastTerm: snap.lastTerm, lastHash: snap.lastHash };
  } catch (err) {
    throw new StateCorruptError(file, null, null, (err as Error).message);
  }
}

export interface StoredTexts {
  readonly snapshot: string | null;
  readonly prevSnapshot: string | null;
  readonly log: string | null;
}

/**
 * Restores from the saved texts (null: no file). The newest snapshot is used when it decodes; a damaged one is
 * rebuilt from the older snapshot (or from nothing) plus the log when the log covers the range between.
 */
export function restoreStored<S>(
  replica: StateMachine<S>,
  cluster: string,
  texts: StoredTexts,
  retain: number,
  retainBytes = Infinity,
): Restored<S> {
  const warnings: string[] = [];
  const parsed = texts.log ? parseLog(texts.log) : { records: [], validBytes: 0, torn: false };
  if (parsed.torn)
    warnings.push(`${LOG_FILE} ends in a partial record (a crash while writing, never acknowledged): dropped`);
  const entries = parsed.records.flatMap((r) => (r.record.kind === 'entry' ? [r.record.entry] : []));
  const marks = parsed.records.flatMap((r) => (r.record.kind === 'commit' ? [r.record.commit] : []));
  const firstLogged = entries[0]?.index;
  const empty: Base<S> = { state: replica.initial(), index: 0, lastTerm: 0, lastHash: emptyLog.baseHash };
  let base: Base<S>;
  if (texts.snapshot !== null) {
    try {
      base = decodeSnapshot(replica, cluster, texts.snapshot, SNAPSHOT_FILE);
    } catch (err) {
      if (!(err instanceof StateCorruptError)) throw err;
      const older =
        texts.prevSnapshot !== null ? decodeSnapshot(replica, cluster, texts.prevSnapshot, PREV_SNAPSHOT_FILE) : empty;
      if (firstLogged === undefined || firstLogged > older.index + 1) {
        throw new StateCorruptError(
          SNAPSHOT_FILE,
          null,
          null,
          `${err.details.detail as string}; the log does not cover the range from ${texts.prevSnapshot !== null ? 'the older snapshot' : 'the start'} (it begins at entry ${firstLogged ?? 'none'}), so it cannot be rebuilt`,
        );
      }
      warnings.push(
        `${SNAPSHOT_FILE} is damaged (${err.details.detail as string}): rebuilt from ${texts.prevSnapshot !== null ? PREV_SNAPSHOT_FILE : 'the start'} and ${LOG_FILE}`,
      );
      base = older;
    }
  } else if (texts.prevSnapshot !== null) {
    base = decodeSnapshot(replica, cluster, texts.prevSnapshot, PREV_SNAPSHOT_FILE); // a crash between the two renames
  } else {
    base = empty;
  }
  let log: LogState = resetTo(base.index, base.lastTerm, base.lastHash);
  const tail = entries.filter((e) => e.index > base.index);
  if (tail.length > 0 && tail[0]!.index !== base.index + 1) {
    const at = parsed.records.find((r) => r.record.kind === 'entry' && r.record.entry.index === tail[0]!.index)!;
    throw new StateCorruptError(
      LOG_FILE,
      parsed.records.indexOf(at) + 1,
      at.offset,
      `entry ${tail[0]!.index} does not follow the snapshot at ${base.index}`,
    );
  }
  log = appendEntries(log, tail);
  const commit = Math.min(Math.max(base.index, ...marks), lastIndex(log));
  let state = base.state;
  let replayed = 0;
  for (const e of tail) {
    if (e.index > commit) break;
    try {
      state = replica.apply(state, e);
    } catch (err) {
      const at = parsed.records.find((r) => r.record.kind === 'entry' && r.record.entry.index === e.index)!;
      throw new StateCorruptError(
        LOG_FILE,
        parsed.records.indexOf(at) + 1,
        at.offset,
        `entry ${e.index} does not apply: ${(err as Error).message}`,
      );
    }
    replayed++;
  }
  return {
    state,
    log: compactLog(log, commit, retain, retainBytes),
    commit,
    replayed,
    warnings,
    snapshotIndex: base.index,
  };
}

/** The snapshot header fields for a state at `index` of `log` (index must be held: the base or later). */
export function positionOf(log: LogState, index: number): { index: number; lastTerm: number; lastHash: string } {
  return { index, lastTerm: termAt(log, index) ?? lastTerm(log), lastHash: hashAt(log, index) ?? lastHash(log) };
}
