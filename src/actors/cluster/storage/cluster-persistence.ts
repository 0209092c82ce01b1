/**
 * ClusterNode's use of the data dir (state-store.ts): load the saved state at start, write what each run appended
 * (one fsync per group, `flush`), the commit index, the vote, and snapshots. Without a data dir nothing is
 * written and `flush` reports the whole log durable (memory only: tests and the standalone lab nodes).
 */
import type { Logger } from '../../../runtime/log.js';
import type { IndexedEnvelope } from '../../../protocols/peer-frames.js';
import type { DurableFs } from '../../../native/durable-fs.js';
import { lastIndex, type LogState } from '../agreement/log.js';
import type { SavedVote } from '../agreement/types.js';
import type { StateMachine } from '../agreement/state-machine.js';
import { StateStore, type Loaded } from './state-store.js';

export interface ClusterPersistenceOptions<S> {
  /** None = memory only. */
  readonly dataDir: string | undefined;
  readonly replica: StateMachine<S>;
  /** Cluster name hash. */
  readonly cluster: string;
  readonly retain: number;
  readonly retainBytes?: number;
  readonly compactEvery: number | undefined;
  readonly repair?: boolean | undefined;
  readonly fs?: DurableFs | undefined;
  readonly log: Logger;
  readonly now: () => number;
}

/** What one agreement step left for the disk. */
export interface RunOutcome<S> {
  readonly state: S;
  readonly log: LogState;
  readonly commit: number;
  readonly persist: readonly IndexedEnvelope[];
  readonly installed: boolean;
  /** The state is not at the commit index (an apply failed, or a snapshot is awaited): no snapshot now. */
  readonly unsettled: boolean;
  readonly mustJoin: boolean;
}

export class ClusterPersistence<S> {
  readonly #o: ClusterPersistenceOptions<S>;
  #store: StateStore<S> | null = null;

  constructor(options: ClusterPersistenceOptions<S>) {
    this.#o = options;
  }

  get enabled(): boolean {
    return this.#store !== null;
  }

  /** Opens the store and loads it (throws StateCorruptError on damage); null when there is no data dir. */
  load(): Loaded<S> | null {
    const o = this.#o;
    if (!o.dataDir) return null;
    const store = new StateStore<S>({
      dataDir: o.dataDir,
      replica: o.replica,
      cluster: o.cluster,
      retain: o.retain,
      ...(o.retainBytes !== undefined ? { retainBytes: o.retainBytes } : {}),
      repair: o.repair ?? false,
      ...(o.compactEvery !== undefined ? { compactEvery: o.compactEvery } : {}),
      ...(o.fs ? { fs: o.fs } : {}),
      log: o.log,
      now: o.now,
    });
    const r = store.load();
    this.#store = store;
    return r;
  }

  /** After a run: appended entries and the commit index are written; an install (or enough entries) saves a snapshot. */
  afterRun(r: RunOutcome<S>): void {
    const store = this.#store;
    if (!store) return;
    if (r.installed && !r.unsettled) {
      store.save(r.state, r.commit, r.log); // rewrites the log from memory: it holds this run's entries too
    } else {
      store.append(r.persist);
      store.noteCommit(r.commit);
      if (store.dueForSnapshot && !r.unsettled) store.save(r.state, r.commit, r.log);
    }
    if (!r.mustJoin) store.clearRepair();
  }

  /** One fsync covering everything written so far; the index the saved log now holds durably. */
  flush(log: LogState): number {
    return this.#store ? this.#store.flush() : lastIndex(log);
  }

  saveVote(vote: SavedVote): void {
    this.#store?.saveVote(vote);
  }

  /** On stop: a last snapshot (unless the state is not at the commit index). */
  close(state: S, commit: number, log: LogState, unsettled: boolean): void {
    try {
      if (this.#store && !unsettled) this.#store.save(state, commit, log);
    } finally {
      this.#store?.close();
    }
  }
}
