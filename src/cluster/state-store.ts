/**
 * Saves the replicated state in the data dir so that a whole-cluster restart does not start from an empty log:
 * `<dataDir>/cluster-state/snapshot.json` (state + log position, replaced atomically: temp file, fsync, rename)
 * and `log.jsonl` (every entry applied since, one line each, appended). Every `compactEvery` entries, on a
 * snapshot install and on stop, a new snapshot is written and the log emptied. Appends are not fsynced: a
 * process crash loses nothing, a power cut may lose the last entries the OS had not written (the cluster
 * refills them). A corrupt snapshot is moved aside (`snapshot.json.corrupt-<time>`) with a warning and the node
 * starts empty. Write errors are logged (once per kind) and never stop the node.
 * Pure parts (format, validation, replay) are in stored-state.ts.
 */
import { closeSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../runtime/log.js';
import type { IndexedEnvelope } from '../protocols/peer-frames.js';
import { lastIndex, type LogState } from './log.js';
import type { ReplicatedState } from './replicated-state.js';
import { encodeLogLine, encodeStored, restoreStored, type Restored } from './stored-state.js';

export const STATE_DIR = 'cluster-state';

export interface StateStoreOptions<S> {
  readonly dataDir: string;
  readonly replica: ReplicatedState<S>;
  /** Cluster name hash (a data dir reused for another cluster starts empty). */
  readonly cluster: string;
  /** Entries the restored log keeps for gap requests (the agreement's retainEntries). */
  readonly retain: number;
  readonly compactEvery?: number;
  readonly log: Logger;
  readonly now: () => number;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export class StateStore<S> {
  readonly dir: string;
  readonly #o: StateStoreOptions<S>;
  #logFd: number | null = null;
  #sinceSnapshot = 0;
  #savedIndex = -1;
  readonly #reported = new Set<string>();

  constructor(options: StateStoreOptions<S>) {
    this.#o = options;
    this.dir = join(options.dataDir, STATE_DIR);
  }

  get snapshotPath(): string {
    return join(this.dir, 'snapshot.json');
  }

  get logPath(): string {
    return join(this.dir, 'log.jsonl');
  }

  /** Reads what was saved (never throws for bad content: see restoreStored). */
  load(): Restored<S> {
    mkdirSync(this.dir, { recursive: true });
    let snapshotText: string | null = null;
    let logText: string | null = null;
    try {
      snapshotText = readOrNull(this.snapshotPath);
      logText = readOrNull(this.logPath);
    } catch (err) {
      this.#o.log.error('cannot read the saved cluster state: starting empty', { dir: this.dir, err });
    }
    const r = restoreStored(this.#o.replica, this.#o.cluster, snapshotText, logText, this.#o.retain);
    for (const w of r.warnings) this.#o.log.warn(w, { dir: this.dir });
    if (r.badSnapshot) {
      const aside = `${this.snapshotPath}.corrupt-${this.#o.now()}`;
      try {
        renameSync(this.snapshotPath, aside);
        this.#o.log.warn('moved the unusable snapshot aside', { file: aside });
      } catch { /* gone already */ }
    }
    // Start clean: the restored state becomes the snapshot and the log restarts empty after it (so a torn last
    // line can never be glued to the next append).
    this.#savedIndex = -1;
    this.save(r.state, r.log);
    return r;
  }

  /** Appends applied entries (consecutive, after the last saved position). */
  append(entries: readonly IndexedEnvelope[]): void {
    if (entries.length === 0) return;
    try {
      this.#logFd ??= openSync(this.logPath, 'a', 0o600);
      writeSync(this.#logFd, entries.map(encodeLogLine).join(''));
      this.#sinceSnapshot += entries.length;
    } catch (err) {
      this.#report('append', err);
    }
  }

  get dueForSnapshot(): boolean {
    return this.#sinceSnapshot >= (this.#o.compactEvery ?? 1000);
  }

  /** Writes the snapshot atomically (state must be at the log's last index), then empties the log. */
  save(state: S, log: LogState): void {
    if (lastIndex(log) === this.#savedIndex && this.#sinceSnapshot === 0) return;
    const tmp = `${this.snapshotPath}.tmp`;
    try {
      mkdirSync(this.dir, { recursive: true });
      const fd = openSync(tmp, 'w', 0o600);
      try {
        writeSync(fd, encodeStored(this.#o.replica, this.#o.cluster, state, log, this.#o.now()));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, this.snapshotPath);
      this.#syncDir();
      this.#logFd ??= openSync(this.logPath, 'a', 0o600);
      ftruncateSync(this.#logFd, 0);
      this.#sinceSnapshot = 0;
      this.#savedIndex = lastIndex(log);
    } catch (err) {
      this.#report('snapshot', err);
    }
  }

  close(): void {
    if (this.#logFd !== null) {
      try { closeSync(this.#logFd); } catch { /* closed */ }
      this.#logFd = null;
    }
  }

  /** The rename is durable only once the directory entry is. Best effort (not every platform allows it). */
  #syncDir(): void {
    try {
      const fd = openSync(this.dir, 'r');
      try { fsyncSync(fd); } finally { closeSync(fd); }
    } catch { /* not supported here */ }
  }

  #report(kind: string, err: unknown): void {
    if (this.#reported.has(kind)) return;
    this.#reported.add(kind);
    this.#o.log.error(`cannot save the cluster state (${kind}); the node keeps running, a restart may start from an older state`, { dir: this.dir, err });
  }
}
