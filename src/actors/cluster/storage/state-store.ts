/**
 * The saved replicated state in `<dataDir>/cluster-state/` (format in stored-state.ts):
 * - `log.jsonl`: checksummed records, appended as entries arrive (committed or not) and made durable by one
 *   fsync per group (`flush`): the caller acknowledges or counts an entry only after that fsync.
 * - `snapshot.json` (+ `snapshot.prev.json`): the applied state, written every `compactEvery` entries and on a
 *   snapshot install, through the one atomic-write helper; the log then keeps only entries after the older
 *   snapshot (so a damaged newest snapshot can be rebuilt), which bounds it.
 * - `vote.json`: term and vote, saved before a vote is granted or a campaign starts.
 * A damaged file stops the start with StateCorruptError (file, record, offset) unless `repair` is set: then the
 * readable prefix is kept, the rest is moved aside to `<file>.damaged-<time>`, and the node must catch up from a
 * leader before it votes or leads (marker file `repair-pending`). Write errors throw: a node that cannot write
 * never acknowledges.
 */
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../../runtime/log.js';
import type { IndexedEnvelope } from '../../../protocols/peer-frames.js';
import { fsyncDir, realFs, writeFileAtomicSync, type DurableFs } from '../../../native/durable-fs.js';
import { lastIndex, sliceLog, type LogState } from '../agreement/log.js';
import type { SavedVote } from '../agreement/types.js';
import type { StateMachine } from '../agreement/state-machine.js';
import {
  encodeCommitLine,
  encodeLogLine,
  encodeStored,
  LOG_FILE,
  parseLog,
  positionOf,
  PREV_SNAPSHOT_FILE,
  restoreStored,
  SNAPSHOT_FILE,
  StateCorruptError,
  type Restored,
} from './stored-state.js';
import type { TorusError } from '../../../protocols/errors.js';

export const STATE_DIR = 'cluster-state';
export const VOTE_FILE = 'vote.json';
export const REPAIR_MARK = 'repair-pending';

export interface StateStoreOptions<S> {
  readonly dataDir: string;
  readonly replica: StateMachine<S>;
  /** Cluster name hash (a data dir of another cluster is refused). */
  readonly cluster: string;
  /** Entries the restored log keeps for gap requests (the agreement's retainEntries). */
  readonly retain: number;
  /** And the bytes it keeps (the agreement's retainBytes). */
  readonly retainBytes?: number;
  readonly compactEvery?: number;
  /** Keep the readable part of a damaged state and move the rest aside (`--repair-state`), instead of refusing. */
  readonly repair?: boolean;
  readonly log: Logger;
  readonly now: () => number;
  /** The fs layer (tests count fsyncs with a double). */
  readonly fs?: DurableFs;
}

export interface Loaded<S> extends Restored<S> {
  readonly vote: SavedVote | undefined;
  /** Repaired (now or at an earlier start, not yet caught up): follow a leader before voting or leading. */
  readonly mustJoin: boolean;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function decodeVote(text: string): SavedVote {
  const r = JSON.parse(text) as Record<string, unknown>;
  const int = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (
    !r ||
    typeof r !== 'object' ||
    !int(r.term) ||
    !int(r.votedTerm) ||
    !(r.votedFor === null || (typeof r.votedFor === 'string' && r.votedFor.length <= 128))
  ) {
    throw new Error('expected {term, votedTerm, votedFor}');
  }
  return { term: r.term, votedTerm: r.votedTerm, votedFor: r.votedFor };
}

export class StateStore<S> {
  readonly dir: string;
  readonly #o: StateStoreOptions<S>;
  readonly #fs: DurableFs;
  #logFd: number | null = null;
  #sinceSnapshot = 0;
  #snapshotIndex = 0;
  #written = 0;
  #dirty = false;
  #commitMark = 0;
  #repairPending = false;

  constructor(options: StateStoreOptions<S>) {
    this.#o = options;
    this.#fs = options.fs ?? realFs;
    this.dir = join(options.dataDir, STATE_DIR);
  }

  get snapshotPath(): string {
    return join(this.dir, SNAPSHOT_FILE);
  }
  get logPath(): string {
    return join(this.dir, LOG_FILE);
  }
  get votePath(): string {
    return join(this.dir, VOTE_FILE);
  }

  /** Reads what was saved; throws StateCorruptError on damage (unless repairing). */
  load(): Loaded<S> {
    this.#fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.#repairPending = existsSync(join(this.dir, REPAIR_MARK));
    let r: Restored<S> | null = null;
    for (let attempt = 0; r === null; attempt++) {
      const texts = {
        snapshot: readOrNull(this.snapshotPath),
        prevSnapshot: readOrNull(join(this.dir, PREV_SNAPSHOT_FILE)),
        log: readOrNull(this.logPath),
      };
      try {
        r = restoreStored(this.#o.replica, this.#o.cluster, texts, this.#o.retain, this.#o.retainBytes);
      } catch (err) {
        if (!(err instanceof StateCorruptError)) throw err;
        // Name the file by its full path: the operator must find it.
        if (!this.#o.repair || attempt > 2)
          throw new StateCorruptError(join(this.dir, err.file), err.record, err.offset, err.details.detail as string);
        this.#repair(err, texts.log);
      }
    }
    for (const w of r.warnings) this.#o.log.warn(w, { dir: this.dir });
    const vote = this.#loadVote();
    // Start from a clean log file: the restored records only (a torn last record is gone for good).
    this.#snapshotIndex = r.snapshotIndex;
    this.#rewriteLog(r.log, r.commit);
    return { ...r, vote, mustJoin: this.#repairPending };
  }

  #loadVote(): SavedVote | undefined {
    const text = readOrNull(this.votePath);
    if (text === null) return undefined;
    try {
      return decodeVote(text);
    } catch (err) {
      const corrupt = new StateCorruptError(VOTE_FILE, null, null, (err as Error).message);
      if (!this.#o.repair) throw corrupt;
      this.#moveAside(this.votePath);
      this.#markRepair(corrupt);
      return undefined;
    }
  }

  #repair(err: StateCorruptError, logText: string | null): void {
    if (err.file === LOG_FILE && err.offset !== null && logText !== null) {
      const bytes = Buffer.from(logText, 'utf8');
      const aside = `${this.logPath}.damaged-${this.#o.now()}`;
      writeFileAtomicSync(aside, bytes.subarray(err.offset), { fs: this.#fs });
      writeFileAtomicSync(this.logPath, bytes.subarray(0, err.offset), { fs: this.#fs });
      this.#o.log.warn('repair: kept the readable part of the log, moved the rest aside', {
        file: this.logPath,
        record: err.record,
        offset: err.offset,
        aside,
      });
    } else {
      // No usable snapshot: nothing after it can be applied either. Everything goes aside; the leader sends a snapshot.
      for (const f of [SNAPSHOT_FILE, PREV_SNAPSHOT_FILE, LOG_FILE]) this.#moveAside(join(this.dir, f));
      this.#o.log.warn(
        'repair: the saved snapshot is unusable; moved the saved state aside, the node catches up from the leader',
        { dir: this.dir, problem: err.message },
      );
    }
    this.#markRepair(err);
  }

  #moveAside(path: string): void {
    if (!existsSync(path)) return;
    renameSync(path, `${path}.damaged-${this.#o.now()}`);
    fsyncDir(this.dir, this.#fs);
  }

  #markRepair(err: TorusError): void {
    writeFileAtomicSync(
      join(this.dir, REPAIR_MARK),
      `${JSON.stringify({ at: this.#o.now(), problem: err.message })}\n`,
      { fs: this.#fs },
    );
    this.#repairPending = true;
  }

  /** The node caught up from a leader after a repair: it may vote and lead again. */
  clearRepair(): void {
    if (!this.#repairPending) return;
    rmSync(join(this.dir, REPAIR_MARK), { force: true });
    fsyncDir(this.dir, this.#fs);
    this.#repairPending = false;
  }

  get repairPending(): boolean {
    return this.#repairPending;
  }

  /** Writes entries appended to the log (not durable until `flush`). */
  append(entries: readonly IndexedEnvelope[]): void {
    if (entries.length === 0) return;
    this.#write(entries.map(encodeLogLine).join(''));
    this.#written = entries.at(-1)!.index;
    this.#sinceSnapshot += entries.length;
  }

  /** Records the commit index (made durable with the next flush; a lower one after a crash is safe). */
  noteCommit(commit: number): void {
    if (commit <= this.#commitMark) return;
    this.#write(encodeCommitLine(commit));
    this.#commitMark = commit;
  }

  /** One fsync for everything written since the last one (group commit); returns the index now durable. */
  flush(): number {
    if (this.#dirty && this.#logFd !== null) {
      this.#fs.fsyncSync(this.#logFd);
      this.#dirty = false;
    }
    return this.#written;
  }

  get dueForSnapshot(): boolean {
    return this.#sinceSnapshot >= (this.#o.compactEvery ?? 1000);
  }

  /**
   * Saves the applied state (at `commit`) as the newest snapshot, the old one as the older snapshot, and rewrites
   * the log to the entries after the older one (committed or not: nothing uncommitted is ever dropped).
   */
  save(state: S, commit: number, log: LogState): void {
    const older = this.#snapshotIndex;
    // An installed snapshot may be older than the last one saved: the log then starts right after the new one.
    this.#rewriteLog(log, commit, Math.min(older, commit));
    if (existsSync(this.snapshotPath)) {
      this.#fs.renameSync(this.snapshotPath, join(this.dir, PREV_SNAPSHOT_FILE));
      fsyncDir(this.dir, this.#fs);
    }
    writeFileAtomicSync(
      this.snapshotPath,
      encodeStored(this.#o.replica, this.#o.cluster, state, positionOf(log, commit), this.#o.now()),
      { fs: this.#fs },
    );
    this.#snapshotIndex = commit;
    this.#sinceSnapshot = 0;
  }

  saveVote(vote: SavedVote): void {
    writeFileAtomicSync(this.votePath, `${JSON.stringify(vote)}\n`, { fs: this.#fs });
  }

  close(): void {
    if (this.#logFd !== null) {
      try {
        this.#fs.closeSync(this.#logFd);
      } catch {
        /* closed */
      }
      this.#logFd = null;
    }
  }

  /** Replaces the log file with the held entries after `from` and the commit mark, durably; reopens it. */
  #rewriteLog(log: LogState, commit: number, from = this.#snapshotIndex): void {
    const start = Math.max(from, log.base) + 1;
    const entries = start <= lastIndex(log) ? (sliceLog(log, start, lastIndex(log)) ?? []) : [];
    this.close();
    writeFileAtomicSync(this.logPath, entries.map(encodeLogLine).join('') + encodeCommitLine(commit), { fs: this.#fs });
    this.#logFd = this.#fs.openSync(this.logPath, 'a', 0o600);
    this.#commitMark = commit;
    this.#written = lastIndex(log);
    this.#dirty = false;
  }

  #write(text: string): void {
    this.#logFd ??= this.#fs.openSync(this.logPath, 'a', 0o600);
    const bytes = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < bytes.length) off += this.#fs.writeSync(this.#logFd, bytes.subarray(off));
    this.#dirty = true;
  }
}

export { parseLog };
