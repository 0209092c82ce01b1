/**
 * Keeps this node's holdings in the replicated state equal to its store: every `intervalMs` it compares what the
 * state says this node holds with what the store (and the transfers in progress) hold, and proposes the
 * difference: `ArtifactHeld` with the current chunk count (so a transfer's progress reaches every node every few
 * seconds), `ArtifactDropped` for what is no longer here. It waits until the state knows this node (a holding of
 * an unknown node is ignored), re-announces after a re-join (NodeGone drops a node's holdings) and retries while
 * there is no leader. A proposal is repeated only when it changed, or after `repeatMs` if the state still differs.
 * A model artifact's record goes along with the holding while the state has no record of that model. A sync asked
 * for while one runs waits for it and then runs again (that one may have read the store before the change the
 * caller wants announced).
 */
import type { ClusterEvent } from '../protocols/events.js';
import type { ClusterState } from '../actors/topology-keeper/state.js';
import type { ModelRecord } from '../protocols/model-record.js';
import type { ArtifactStage } from '../protocols/artifact-events.js';

export interface LocalHolding {
  readonly id: string;
  readonly name: string;
  readonly bytes: number;
  readonly chunks: number;
  readonly have: number;
  /** while a transfer runs: its current rate (bytes/s) */
  readonly rateBps?: number;
  /** a model artifact's record, sent along while the state has none for it */
  readonly model?: ModelRecord;
  /** a partial model artifact held for a pipeline stage: its layers and that stage's chunks held */
  readonly stage?: ArtifactStage;
}

/** What a proposal says of a holding, to compare with the state's: the chunk count and the stage's progress. */
const holdingKey = (have: number, stage: ArtifactStage | undefined): string =>
  stage ? `${have} ${stage.fromLayer}-${stage.toLayer} ${stage.have}/${stage.chunks}` : `${have}`;

export interface ClusterPort {
  state(): Promise<ClusterState>;
  /** Resolves once the leader committed the event (this node may apply it later). */
  propose(event: ClusterEvent): Promise<void>;
  /**
   * Resolves once this node's applied state passes `done` (checked now and after each applied artifact event),
   * so what a user's command wrote is readable here when it returns; rejects with `onTimeout()` after `timeoutMs`.
   */
  until(done: (state: ClusterState) => boolean, timeoutMs: number, onTimeout: () => Error): Promise<void>;
}

export class HoldingsSync {
  readonly #proposed = new Map<string, { have: string; at: number }>();
  #timer: NodeJS.Timeout | undefined;
  #current: Promise<void> | undefined;
  #queued: Promise<void> | undefined;
  #closed = false;

  constructor(
    private readonly nodeId: string,
    private readonly cluster: ClusterPort,
    private readonly local: () => LocalHolding[],
    private readonly intervalMs = 2000,
    private readonly repeatMs = 10_000,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  start(): void {
    const tick = (): void => {
      if (this.#closed) return;
      void this.syncNow().finally(() => {
        if (!this.#closed) this.#timer = setTimeout(tick, this.intervalMs);
      });
    };
    this.#timer = setTimeout(tick, 0);
  }

  /** A sync that starts after this call; a failure goes to `onError` (the periodic sync, after a transfer). */
  syncNow(): Promise<void> {
    return this.#schedule().catch((error: unknown) => this.onError(error));
  }

  /** The same, for a user's command: a failure (no leader, no quorum) rejects. */
  syncOrThrow(): Promise<void> {
    return this.#schedule();
  }

  #schedule(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (!this.#current) {
      this.#current = this.#run().finally(() => {
        this.#current = undefined;
      });
      return this.#current;
    }
    // One run at a time; callers that come during it share the one run after it.
    this.#queued ??= this.#current
      .catch(() => undefined)
      .then(() => {
        this.#queued = undefined;
        return this.#schedule();
      });
    return this.#queued;
  }

  async #run(): Promise<void> {
    try {
      const state = await this.cluster.state();
      if (!Object.hasOwn(state.nodes, this.nodeId)) return;
      const now = Date.now();
      const mine = new Map<string, string>();
      const recorded = new Set<string>();
      for (const [id, a] of Object.entries(state.artifacts ?? {})) {
        const h = Object.hasOwn(a.holders, this.nodeId) ? a.holders[this.nodeId] : undefined;
        if (h) mine.set(id, holdingKey(h.have, h.stage));
        if (a.model) recorded.add(id);
      }
      const due = (id: string, have: string): boolean => {
        const last = this.#proposed.get(id);
        return !last || last.have !== have || now - last.at > this.repeatMs;
      };
      const local = this.local();
      for (const h of local) {
        const sendModel = h.model !== undefined && !recorded.has(h.id);
        const key = holdingKey(h.have, h.stage);
        if ((mine.get(h.id) === key && !sendModel) || !due(h.id, key)) continue;
        this.#proposed.set(h.id, { have: key, at: now });
        await this.cluster.propose({
          type: 'ArtifactHeld',
          nodeId: this.nodeId,
          artifactId: h.id,
          name: h.name,
          bytes: h.bytes,
          chunks: h.chunks,
          have: h.have,
          ...(h.rateBps ? { rateBps: h.rateBps } : {}),
          ...(sendModel ? { model: h.model } : {}),
          ...(h.stage ? { stage: h.stage } : {}),
        });
      }
      const here = new Set(local.map((h) => h.id));
      for (const id of mine.keys()) {
        if (here.has(id) || !due(id, 'dropped')) continue;
        this.#proposed.set(id, { have: 'dropped', at: now });
        await this.cluster.propose({
          type: 'ArtifactDropped',
          nodeId: this.nodeId,
          artifactId: id,
          reason: 'not in the store of this node',
        });
      }
    } catch (error) {
      this.#proposed.clear(); // no leader, shutting down…: propose again next time
      throw error;
    }
  }

  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
  }
}
