/**
 * The transfers a node runs into its store: started by a user's fetch, a broadcast chain's order or a runner's
 * need, from the artifact's holders (or a chain's upstream), each with the status GET /v1/artifacts/transfers shows.
 */
import { TorusError, asTorusError } from '../protocols/errors.js';
import type { ClusterState } from '../actors/topology-keeper/state.js';
import type { Logger } from '../runtime/log.js';
import type { ChangeSignal } from './change-signal.js';
import type { ClusterPort, HoldingsSync } from './holdings-sync.js';
import { artifactId } from './ids.js';
import type { LayerRange } from './model/stage-chunks.js';
import { addressesOf, sourcesFor } from './sources.js';
import { boundFromState, boundView } from './state-bound.js';
import { prepareTransfer, type PrepareDeps } from './transfer-prepare.js';
import type { CorruptionReport, TransferStatus } from './transfer-status.js';
import { runTransfer, type TransferSource } from './transfer.js';
import type { ArtifactWriter } from './writer.js';

export interface TransfersDeps extends PrepareDeps {
  readonly cluster: ClusterPort;
  readonly log: Logger;
  readonly sync: HoldingsSync;
  /** bumped when a transfer ends */
  readonly changes: ChangeSignal;
  readonly concurrency?: number | undefined;
  readonly stallMs?: number | undefined;
}

export class Transfers {
  readonly #d: TransfersDeps;
  readonly #writers = new Map<string, ArtifactWriter>();
  readonly #statuses = new Map<string, TransferStatus>();
  readonly #running = new Map<string, Promise<void>>();
  readonly #reports: CorruptionReport[] = [];
  /** the chunk set of each running stage transfer */
  readonly #targets = new Map<string, Uint8Array | undefined>();

  constructor(d: TransfersDeps) {
    this.#d = d;
  }

  /** The writer of the transfer of `id` running here. */
  writer(id: string): ArtifactWriter | undefined {
    return this.#writers.get(id);
  }

  /** True once a transfer of `id` ran in this process (its status is kept until the artifact is removed). */
  has(id: string): boolean {
    return this.#statuses.has(id);
  }

  /** True while a transfer of `id` runs (a removal waits for it to end). */
  busy(id: string): boolean {
    return this.#running.has(id);
  }

  /** The receive rate of a running transfer of `id` (0 when none runs). */
  rateBps(id: string): number {
    const t = this.#statuses.get(id);
    return t?.state === 'running' ? t.rateBps : 0;
  }

  /** Forgets the status of `id` (removed from the store). */
  forget(id: string): void {
    this.#statuses.delete(id);
  }

  list(): { transfers: TransferStatus[]; corruption: CorruptionReport[] } {
    return { transfers: [...this.#statuses.values()].map((t) => ({ ...t })), corruption: [...this.#reports] };
  }

  get(id: string): TransferStatus | undefined {
    const t = this.#statuses.get(id);
    return t && { ...t };
  }

  /** Resumes a transfer a previous run left partial, once the state names a source for it (two minutes at most). */
  async resumeLater(id: string, stage: LayerRange | undefined): Promise<void> {
    for (let i = 0; i < 60 && !this.#d.signal.aborted; i++) {
      const state = await this.#d.cluster.state().catch(() => undefined);
      if (state && sourcesFor(state, this.#d.nodeId, id).length > 0) {
        await this.fetch(id, stage ? { stage } : {}).catch((error: unknown) =>
          this.#d.log.warn('resuming an artifact transfer failed', { id, error: asTorusError(error).message }),
        );
        return;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  /**
   * Fetches `id` into this node's store from its holders (or, in a broadcast chain, from `upstream` as chunks
   * arrive there). Resolves once the transfer runs (manifest fetched, space checked): a refusal (no holder, not
   * enough disk) rejects here; the transfer itself continues in the background (see `list()`).
   * `stage`: a model artifact's pipeline stage: only the chunks of those layers' tensors (stage-chunks.ts), from
   * every holder that has them; the partial copy stays a stage holding (served, not resumed to the whole).
   */
  async fetch(
    id: string,
    opts: { upstream?: string; name?: string; stage?: LayerRange } = {},
  ): Promise<TransferStatus> {
    artifactId(id);
    const running = this.#statuses.get(id);
    if (running && (running.state === 'running' || running.state === 'preparing')) {
      const same = opts.stage
        ? !running.stage ||
          (running.stage.fromLayer <= opts.stage.fromLayer && opts.stage.toLayer <= running.stage.toLayer)
        : !running.stage;
      if (same) return { ...running };
      throw new TorusError(
        'TORUS_ARTIFACT_BUSY',
        `artifact ${id} is being fetched for ${running.stage ? `layers ${running.stage.fromLayer}–${running.stage.toLayer}` : 'the whole artifact'}; ask again when that ends`,
        { id },
      );
    }
    const { store } = this.#d;
    if (store.info(id)?.complete) {
      const d = store.describe(id)!;
      return {
        id,
        name: d.name,
        state: 'complete',
        chunks: d.chunks,
        have: d.chunks,
        bytes: d.bytes,
        haveBytes: d.bytes,
        startedAt: Date.now(),
        endedAt: Date.now(),
        rateBps: 0,
        sources: [],
        bySource: {},
        corrupt: {},
      };
    }
    const state = await this.#d.cluster.state();
    const sources = this.#sourcesOf(state, id, opts.upstream);
    const record = state.artifacts?.[id];
    if (opts.stage) this.#d.stages.keepModel(id, record?.model, opts.stage);
    if (sources.length === 0)
      throw new TorusError('TORUS_ARTIFACT_UNAVAILABLE', `no other node holds artifact ${id}`, { id });
    const status: TransferStatus = {
      id,
      name: opts.name ?? record?.name ?? id.slice(0, 12),
      state: 'preparing',
      chunks: record?.chunks ?? 0,
      have: 0,
      bytes: record?.bytes ?? 0,
      haveBytes: 0,
      startedAt: Date.now(),
      rateBps: 0,
      sources: sources.map((s) => s.nodeId),
      bySource: {},
      corrupt: {},
      ...(opts.upstream ? { upstream: opts.upstream } : {}),
      ...(opts.stage ? { stage: { fromLayer: opts.stage.fromLayer, toLayer: opts.stage.toLayer } } : {}),
    };
    this.#statuses.set(id, status);
    let writer: ArtifactWriter;
    try {
      const prepared = await prepareTransfer(this.#d, id, status, sources);
      writer = prepared.writer;
      this.#writers.set(id, writer);
      this.#targets.set(id, prepared.target);
    } catch (error) {
      status.state = 'failed';
      status.endedAt = Date.now();
      const e = asTorusError(error);
      status.error = { code: e.code, message: e.message };
      throw e;
    }
    const bound = boundView(
      boundFromState(
        state,
        id,
        {
          [this.#d.nodeId]: writer.refs
            .filter((r) => !writer.have[r.index] && (this.#targets.get(id)?.[r.index] ?? 1))
            .map((r) => r.index),
        },
        writer.refs.map((r) => r.length),
      ),
    );
    if (bound) status.bound = bound;
    const run = this.#run(id, status, writer, sources).finally(() => this.#running.delete(id));
    this.#running.set(id, run);
    return { ...status };
  }

  async #run(id: string, status: TransferStatus, writer: ArtifactWriter, sources: TransferSource[]): Promise<void> {
    const startBytes = writer.targetBytes;
    const wanted = this.#targets.get(id);
    const progress = (): void => {
      status.have = writer.targetCount;
      status.haveBytes = writer.targetBytes;
      const seconds = (Date.now() - status.startedAt) / 1000;
      // Under a second the rate says more about the start-up than the link: report none (and no ETA) yet.
      status.rateBps = seconds >= 1 ? Math.round((writer.targetBytes - startBytes) / seconds) : 0;
      if (status.rateBps > 0) status.etaSeconds = Math.round((status.bytes - status.haveBytes) / status.rateBps);
    };
    void this.#d.sync.syncNow();
    try {
      const stats = await runTransfer({
        writer,
        sources,
        client: this.#d.client,
        signal: this.#d.signal,
        onChunk: progress,
        ...(wanted ? { wanted } : {}),
        ...(this.#d.concurrency !== undefined ? { concurrency: this.#d.concurrency } : {}),
        ...(this.#d.stallMs !== undefined ? { stallMs: this.#d.stallMs } : {}),
        onCorrupt: (nodeId, chunk) => {
          status.corrupt[nodeId] = (status.corrupt[nodeId] ?? 0) + 1;
          this.#reports.push({ at: Date.now(), artifactId: id, nodeId, chunk });
          if (this.#reports.length > 100) this.#reports.shift();
          this.#d.log.warn('a peer served a corrupt artifact chunk; fetching it elsewhere', {
            artifactId: id,
            peer: nodeId,
            chunk,
          });
        },
      });
      status.bySource = stats.bySource;
      // `complete` counts durable chunks: the last batch is synced first, else a whole fetch whose last chunks
      // were still in that batch would be left partial. A stage's chunks are all here: the copy stays partial
      // (a stage holding).
      await writer.flush();
      if (writer.complete) await writer.finish();
      else await writer.close();
      progress();
      status.state = 'complete';
    } catch (error) {
      const e = asTorusError(error);
      status.state = 'failed';
      status.error = { code: e.code, message: e.message };
      await writer.close();
      this.#d.log.warn('artifact transfer failed', { id, error: e.message });
    } finally {
      status.endedAt = Date.now();
      this.#writers.delete(id);
      this.#targets.delete(id);
      this.#d.forwarding.ended(id, (i) => this.#writers.has(i));
      void this.#d.sync.syncNow();
      this.#d.changes.bump();
    }
  }

  #sourcesOf(state: ClusterState, id: string, upstream?: string): TransferSource[] {
    const { nodeId } = this.#d;
    const holders = sourcesFor(state, nodeId, id);
    const toSource = (h: (typeof holders)[number], extra: Partial<TransferSource> = {}): TransferSource => ({
      nodeId: h.nodeId,
      urls: h.urls,
      complete: h.have === h.chunks,
      ...(h.rates ? { rates: h.rates } : {}),
      ...extra,
    });
    if (upstream === undefined) return holders.map((h) => toSource(h));
    const up = addressesOf(state, nodeId, upstream);
    if (up.urls.length === 0)
      throw new TorusError('TORUS_NODE_UNKNOWN', `upstream ${upstream} is not a known node`, { upstream });
    // The chain's upstream first; complete holders only as a fallback, so the chain's links carry the bytes.
    return [
      { nodeId: upstream, urls: up.urls, waitForChunks: true, ...(up.rates ? { rates: up.rates } : {}) },
      ...holders
        .filter((h) => h.nodeId !== upstream && h.have === h.chunks)
        .map((h) => toSource(h, { fallback: true })),
    ];
  }

  /** Waits for the running transfers to end (the signal aborted them) and closes their writers. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#running.values()]);
    await Promise.all([...this.#writers.values()].map((w) => w.close()));
  }
}
