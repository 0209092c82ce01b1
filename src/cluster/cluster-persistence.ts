/**
 * ClusterNode's use of the data dir (state-store.ts): load the saved state at start, save what each run applied,
 * save a snapshot on stop. Without a data dir every call does nothing (memory only).
 */
import type { Logger } from '../runtime/log.js';
import type { IndexedEnvelope } from '../protocols/peer-frames.js';
import { lastIndex, type LogState } from './log.js';
import type { ReplicatedState } from './replicated-state.js';
import { StateStore } from './state-store.js';
import type { Restored } from './stored-state.js';

export interface ClusterPersistenceOptions<S> {
  /** None = memory only. */
  readonly dataDir: string | undefined;
  readonly replica: ReplicatedState<S>;
  /** Cluster name hash. */
  readonly cluster: string;
  readonly retain: number;
  readonly compactEvery: number | undefined;
  readonly log: Logger;
  readonly now: () => number;
}

export class ClusterPersistence<S> {
  readonly #o: ClusterPersistenceOptions<S>;
  #store: StateStore<S> | null = null;

  constructor(options: ClusterPersistenceOptions<S>) {
    this.#o = options;
  }

  /** Opens the store and loads it; null when there is no data dir or nothing was saved. */
  load(): Restored<S> | null {
    const o = this.#o;
    if (!o.dataDir) return null;
    const store = new StateStore<S>({
      dataDir: o.dataDir, replica: o.replica, cluster: o.cluster, retain: o.retain,
      ...(o.compactEvery !== undefined ? { compactEvery: o.compactEvery } : {}), log: o.log, now: o.now,
    });
    const r = store.load();
    this.#store = store;
    if (lastIndex(r.log) === 0) return null;
    return r;
  }

  /** After a run: the saved log gets what was applied; a snapshot install (or enough appends) saves a snapshot. */
  afterRun(state: S, log: LogState, resyncing: boolean, installed: boolean, applied: readonly IndexedEnvelope[], failed: boolean): void {
    const store = this.#store;
    if (!store || failed || resyncing) return; // the state is not at the log's position: the resync will save
    if (installed || store.dueForSnapshot) store.save(state, log);
    else store.append(applied);
  }

  /** On stop: a last snapshot (unless waiting for a resync: the state is not at the log's position). */
  close(state: S, log: LogState, resyncing: boolean): void {
    if (this.#store && !resyncing) this.#store.save(state, log);
    this.#store?.close();
  }
}
