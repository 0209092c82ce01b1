/**
 * A node's artifact service: its store, the transfers it runs, the peer routes it serves, and the sync of its
 * holdings into the replicated state. Created by startNode; the API routes (src/api/routes/artifact-routes.ts)
 * and the peer handler call it.
 */
import { existsSync, statSync } from 'node:fs';
import { rmSync } from 'node:fs';
import { TorusError, asTorusError } from '../protocols/errors.js';
import type { ClusterState } from '../actors/topology-keeper/state.js';
import type { Logger } from '../runtime/log.js';
import { planBroadcast, type BroadcastAnswer } from './broadcast.js';
import { HoldingsSync, type ClusterPort, type LocalHolding } from './holdings-sync.js';
import { artifactId } from './ids.js';
import { decodeManifest, totalBytes } from './manifest.js';
import { PeerClient } from './peer-client.js';
import { createPeerHandler, type PeerBackend } from './peer-server.js';
import { addressesOf, sourcesFor } from './sources.js';
import { ArtifactStore, type DamagedArtifact } from './store.js';
import { runTransfer, type TransferSource, type TransferStats } from './transfer.js';
import { ArtifactWriter } from './writer.js';
import { RecentChunks } from './recent-chunks.js';
import { inlineHasher, poolHasher, type ChunkHasher, type RunCpuTask } from './chunk-hasher.js';
import { storeRoot, writeInfo } from './layout.js';
import { MAX_CHUNK_WAIT_MS } from './peer-paths.js';
import { boundFromState, boundView, type BoundView } from './state-bound.js';
import { StoredModels, writeModelFile } from './model/model-store.js';
import { stageChunks, type LayerRange } from './model/stage-chunks.js';
import { JournalBits } from './journal-bits.js';
import { ChangeSignal } from './change-signal.js';
import type { ModelRecord } from '../protocols/model-record.js';
import type { ArtifactStage } from '../protocols/artifact-events.js';

/** How long a user's write (announce, remove) waits for this node to apply it before saying it is on its way. */
export const READ_YOUR_WRITES_MS = 10_000;

export interface ArtifactServiceOptions {
  readonly nodeId: string;
  readonly nodeName: string;
  readonly dataDir: string;
  /** the cluster's data-plane key (null: --insecure-open) */
  readonly dataKey: string | null;
  readonly cluster: ClusterPort;
  readonly log: Logger;
  readonly syncIntervalMs?: number;
  readonly stallMs?: number;
  readonly concurrency?: number;
  /** runs a CPU task on the node's piscina pool: chunks are then hashed off the thread that reads the sockets */
  readonly runCpuTask?: RunCpuTask;
}

export interface TransferStatus {
  readonly id: string;
  name: string;
  state: 'preparing' | 'running' | 'complete' | 'failed';
  chunks: number;
  have: number;
  bytes: number;
  haveBytes: number;
  startedAt: number;
  endedAt?: number;
  /** bytes per second received by this transfer so far */
  rateBps: number;
  etaSeconds?: number;
  upstream?: string;
  /** a pipeline stage's transfer: only these layers' chunks (`chunks`, `bytes` and `have` count those) */
  stage?: LayerRange;
  sources: string[];
  bySource: TransferStats['bySource'];
  corrupt: Record<string, number>;
  error?: { code: string; message: string };
  /** the time no schedule beats for the chunks this transfer lacked at its start, over the measured links */
  bound?: BoundView;
}

export interface CorruptionReport {
  readonly at: number;
  readonly artifactId: string;
  readonly nodeId: string;
  readonly chunk: number;
}

export class ArtifactService implements PeerBackend {
  readonly store: ArtifactStore;
  readonly dataKey: string | null;
  readonly #o: ArtifactServiceOptions;
  readonly #client: PeerClient;
  readonly #writers = new Map<string, ArtifactWriter>();
  readonly #transfers = new Map<string, TransferStatus>();
  readonly #running = new Map<string, Promise<void>>();
  readonly #reports: CorruptionReport[] = [];
  readonly #sync: HoldingsSync;
  readonly #abort = new AbortController();
  /** chunks just received, for a downstream node of a chain (the disk copy is not in the page cache) */
  readonly #recent = new RecentChunks();
  readonly #models: StoredModels;
  /** artifacts being received that a downstream node asked for: their chunks are kept in #recent */
  readonly #forwarding = new Set<string>();
  /** the chunks a partial artifact with no transfer running holds (its journal), for serving and holdings */
  readonly #journals = new JournalBits((id) => this.store.paths(id).journal);
  /** a stage's chunk set by artifact and layers (a function of the manifest and the record: never changes) */
  readonly #stageSets = new Map<string, Uint8Array>();

  readonly #hash: ChunkHasher;
  /** bumped when a transfer ends: the runner gate answers on it instead of at its next poll */
  readonly changes = new ChangeSignal();
  /** Damaged artifacts already logged (each once, until it is repaired or removed). */
  #damagedLogged = new Set<string>();

  constructor(o: ArtifactServiceOptions) {
    this.#o = o;
    this.#hash = o.runCpuTask ? poolHasher(o.runCpuTask) : inlineHasher;
    this.dataKey = o.dataKey;
    this.store = new ArtifactStore(storeRoot(o.dataDir));
    this.#models = new StoredModels((id) => this.store.paths(id).dir);
    this.#client = new PeerClient(o.dataKey, o.nodeId);
    this.#sync = new HoldingsSync(
      o.nodeId,
      o.cluster,
      () => this.localHoldings(),
      o.syncIntervalMs ?? 2000,
      10_000,
      (error) => o.log.debug('artifact holdings not synced yet', { error: asTorusError(error).message }),
    );
  }

  /**
   * Starts the holdings sync and resumes the transfers a previous run left partial: a stage holding only up to its
   * stage's chunks, and not at all once it has them (it is a holding, not an interrupted transfer).
   */
  start(): void {
    this.#sync.start();
    for (const a of this.store.list()) {
      if (a.complete) continue;
      const stage = this.store.info(a.id)?.stage;
      if (stage && this.stageProgress(a.id, stage)?.complete) continue;
      void this.#resumeLater(a.id, stage);
    }
  }

  readonly peerHandler = createPeerHandler(this);

  async #resumeLater(id: string, stage: LayerRange | undefined): Promise<void> {
    for (let i = 0; i < 60 && !this.#abort.signal.aborted; i++) {
      const state = await this.#o.cluster.state().catch(() => undefined);
      if (state && sourcesFor(state, this.#o.nodeId, id).length > 0) {
        await this.fetch(id, stage ? { stage } : {}).catch((error: unknown) =>
          this.#o.log.warn('resuming an artifact transfer failed', { id, error: asTorusError(error).message }),
        );
        return;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  /**
   * The artifacts of this node's store whose manifest or info does not verify, with the reason: listed (GET
   * /v1/artifacts `damaged`), counted (/metrics torus_artifacts_damaged) and logged once each, never served or
   * announced.
   */
  damaged(): DamagedArtifact[] {
    return this.#noteDamaged(this.store.scan()).damaged;
  }

  #noteDamaged(scan: ReturnType<ArtifactStore['scan']>): ReturnType<ArtifactStore['scan']> {
    const now = new Set(scan.damaged.map((d) => d.id));
    for (const d of scan.damaged)
      if (!this.#damagedLogged.has(d.id))
        this.#o.log.warn('an artifact in the store does not verify; it is left out of what this node serves', {
          artifactId: d.id,
          name: d.name,
          reason: d.reason,
        });
    this.#damagedLogged = now;
    return scan;
  }

  localHoldings(): LocalHolding[] {
    return this.#noteDamaged(this.store.scan()).artifacts.map((a) => {
      const t = this.#transfers.get(a.id);
      const rateBps = !a.complete && t?.state === 'running' ? t.rateBps : 0;
      const have = a.complete ? a.chunks : this.#partialCount(a.id);
      const stage = a.complete ? undefined : this.#heldStage(a.id, have);
      return {
        id: a.id,
        name: a.name,
        bytes: a.bytes,
        chunks: a.chunks,
        have,
        ...(rateBps > 0 ? { rateBps } : {}),
        ...(this.#models.get(a.id) ? { model: this.#models.get(a.id) } : {}),
        ...(stage ? { stage } : {}),
      };
    });
  }

  /** A partial artifact held for a stage: its layers and how many of the stage's chunks are durable here. */
  #heldStage(id: string, have: number): ArtifactStage | undefined {
    const stage = this.store.info(id)?.stage;
    const p = stage && this.stageProgress(id, stage);
    if (!stage || !p) return undefined;
    return { fromLayer: stage.fromLayer, toLayer: stage.toLayer, have: Math.min(p.have, have), chunks: p.chunks };
  }

  /** The chunks of layers `stage` of model artifact `id` (undefined: no manifest or no record here). */
  stageSet(id: string, stage: LayerRange): Uint8Array | undefined {
    const key = `${id}:${stage.fromLayer}-${stage.toLayer}`;
    const cached = this.#stageSets.get(key);
    if (cached) return cached;
    const m = this.store.manifest(id);
    const model = this.#models.get(id);
    if (!m || !model) return undefined;
    const set = new Uint8Array(m.refs.length);
    for (const i of stageChunks(m.manifest, model, stage)) set[i] = 1;
    if (this.#stageSets.size >= 256) this.#stageSets.delete(this.#stageSets.keys().next().value!);
    this.#stageSets.set(key, set);
    return set;
  }

  /**
   * How far this node's copy of model artifact `id` holds layers `stage`: durable chunks of the stage (`have`,
   * `haveBytes`) against the stage's (`chunks`, `bytes`); undefined while the store has no manifest or record.
   */
  stageProgress(
    id: string,
    stage: LayerRange,
  ): { have: number; chunks: number; haveBytes: number; bytes: number; complete: boolean } | undefined {
    const set = this.stageSet(id, stage);
    const refs = this.store.manifest(id)?.refs;
    if (!set || !refs) return undefined;
    const complete = this.store.info(id)?.complete === true;
    // The journal, not a running writer's `have`: it names only chunks already synced (durable).
    const held = complete ? undefined : this.#journals.bits(id, refs.length);
    let have = 0;
    let chunks = 0;
    let haveBytes = 0;
    let bytes = 0;
    for (let i = 0; i < set.length; i++) {
      if (!set[i]) continue;
      chunks++;
      bytes += refs[i]!.length;
      if (complete || held?.[i]) {
        have++;
        haveBytes += refs[i]!.length;
      }
    }
    return { have, chunks, haveBytes, bytes, complete: have === chunks };
  }

  #partialCount(id: string): number {
    const w = this.#writers.get(id);
    if (w) return w.count;
    const journal = this.store.paths(id).journal;
    return existsSync(journal) ? Math.floor(statSync(journal).size / 4) : 0;
  }

  /** The replicated state as this node has applied it. */
  clusterState(): Promise<ClusterState> {
    return this.#o.cluster.state();
  }

  // ---- peer backend ---------------------------------------------------------------------------------

  manifestBytes(id: string): Buffer | undefined {
    return this.store.manifest(id)?.bytes;
  }

  /** Chunks held: a running transfer's, all of a complete artifact, or those a partial one's journal names (a stage holding serves them). */
  haveSet(id: string): Uint8Array | undefined {
    const w = this.#writers.get(id);
    if (w) return w.have;
    const d = this.store.describe(id);
    if (!d) return undefined;
    return d.complete ? new Uint8Array(d.chunks).fill(1) : this.#journals.bits(id, d.chunks);
  }

  #holds(id: string, index: number): boolean {
    const w = this.#writers.get(id);
    if (w) return !!w.have[index];
    const info = this.store.info(id);
    if (!info) return false;
    return info.complete || !!this.haveSet(id)?.[index];
  }

  async waitForChunk(id: string, index: number, ms: number): Promise<boolean> {
    if (this.#writers.has(id)) this.#forwarding.add(id);
    const end = Date.now() + ms;
    for (;;) {
      const w = this.#writers.get(id);
      if (w ? w.have[index] : this.#holds(id, index)) return true;
      const left = end - Date.now();
      if (left <= 0 || this.#abort.signal.aborted) return false;
      if (w) await w.waitFor(index, left);
      else await new Promise((r) => setTimeout(r, Math.min(100, left)));
    }
  }

  chunkLengths(id: string): readonly number[] | undefined {
    return this.store.manifest(id)?.refs.map((r) => r.length);
  }

  readChunk(id: string, index: number): Promise<Buffer> {
    const recent = this.#recent.take(id, index);
    // Received here (a transfer ran in this process): on disk past the page cache, read it the same way.
    return recent ? Promise.resolve(recent) : this.store.readChunk(id, index, { direct: this.#transfers.has(id) });
  }

  releaseChunk(buf: Buffer): void {
    if (!this.#recent.release(buf)) this.store.releaseChunk(buf);
  }

  async orderFetch(id: string, body: { upstream?: string; name?: string }): Promise<TransferStatus> {
    return this.fetch(id, body);
  }

  // ---- user operations ------------------------------------------------------------------------------

  /**
   * After `artifacts add` wrote the store (or `artifacts fetch` completed): announce it now rather than at the next
   * sync, and answer once this node's own state shows the holding, so the user's next command (a broadcast, a run)
   * sees it here. Committed on the leader is not enough: a follower applies the entry a heartbeat later.
   */
  async announce(id: string): Promise<LocalHoldingView> {
    this.#models.forget(id); // `add` may just have written its model record
    const d = this.store.describe(artifactId(id));
    if (!d)
      throw new TorusError(
        'TORUS_ARTIFACT_UNKNOWN',
        `artifact ${id} is not in the store of this node (${this.#o.dataDir})`,
        { id },
      );
    const have = d.complete ? d.chunks : this.#partialCount(id);
    await this.#sync.syncOrThrow();
    await this.#applied(
      (state) => state.artifacts?.[id]?.holders[this.#o.nodeId]?.have === have,
      `this node holds artifact ${id}`,
    );
    return { ...d, have };
  }

  /** Waits until this node applied what a user's command wrote (READ_YOUR_WRITES_MS at most). */
  #applied(done: (state: ClusterState) => boolean, what: string): Promise<void> {
    return this.#o.cluster.until(
      (state) => Object.hasOwn(state.nodes, this.#o.nodeId) && done(state),
      READ_YOUR_WRITES_MS,
      () =>
        new TorusError(
          'TORUS_ACTOR_TIMEOUT',
          `the cluster's state on this node does not say yet that ${what} (after ${READ_YOUR_WRITES_MS / 1000} s): the ` +
            'change is on its way (no leader, or this node is still joining); `artifacts ls` shows when it is there',
          { what },
        ),
    );
  }

  async remove(id: string): Promise<{ removed: boolean }> {
    artifactId(id);
    if (this.#running.has(id))
      throw new TorusError('TORUS_ARTIFACT_BUSY', `artifact ${id} is being transferred; wait for it to end`, { id });
    this.#recent.drop(id);
    const removed = this.store.remove(id);
    this.#models.forget(id);
    this.#journals.forget(id);
    for (const key of [...this.#stageSets.keys()]) if (key.startsWith(`${id}:`)) this.#stageSets.delete(key);
    if (!removed) throw new TorusError('TORUS_ARTIFACT_UNKNOWN', `artifact ${id} is not on this node`, { id });
    this.#transfers.delete(id);
    await this.#sync.syncOrThrow();
    await this.#applied(
      (state) => !Object.hasOwn(state.artifacts?.[id]?.holders ?? {}, this.#o.nodeId),
      `this node no longer holds artifact ${id}`,
    );
    return { removed };
  }

  transfers(): { transfers: TransferStatus[]; corruption: CorruptionReport[] } {
    return { transfers: [...this.#transfers.values()].map((t) => ({ ...t })), corruption: [...this.#reports] };
  }

  transfer(id: string): TransferStatus | undefined {
    const t = this.#transfers.get(id);
    return t && { ...t };
  }

  /**
   * Fetches `id` into this node's store from its holders (or, in a broadcast chain, from `upstream` as chunks
   * arrive there). Resolves once the transfer runs (manifest fetched, space checked): a refusal (no holder, not
   * enough disk) rejects here; the transfer itself continues in the background (see `transfers()`).
   * `stage`: a model artifact's pipeline stage: only the chunks of those layers' tensors (stage-chunks.ts), from
   * every holder that has them; the partial copy stays a stage holding (served, not resumed to the whole).
   */
  async fetch(
    id: string,
    opts: { upstream?: string; name?: string; stage?: LayerRange } = {},
  ): Promise<TransferStatus> {
    artifactId(id);
    const running = this.#transfers.get(id);
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
    if (this.store.info(id)?.complete) {
      const d = this.store.describe(id)!;
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
    const state = await this.#o.cluster.state();
    const sources = this.#sourcesOf(state, id, opts.upstream);
    const record = state.artifacts?.[id];
    if (opts.stage) this.#keepModel(id, record?.model, opts.stage);
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
    this.#transfers.set(id, status);
    let writer: ArtifactWriter;
    try {
      writer = await this.#prepare(id, status, sources);
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
          [this.#o.nodeId]: writer.refs
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

  /**
   * A stage fetch needs the model's record to know its chunks: the state's (checked by the event and snapshot
   * decoders), kept beside the manifest so the holding, a restart and the shard directory have it.
   */
  #keepModel(id: string, model: ModelRecord | undefined, stage: LayerRange): void {
    if (!model && !this.#models.get(id))
      throw new TorusError(
        'TORUS_MODEL_INVALID',
        `artifact ${id} has no model record: it cannot be fetched by layers`,
        {
          id,
        },
      );
    if (stage.fromLayer >= stage.toLayer || stage.toLayer > (model ?? this.#models.get(id))!.layers)
      throw new TorusError(
        'TORUS_API_VALIDATION',
        `layers ${stage.fromLayer}–${stage.toLayer} are not a stage of a model of ${(model ?? this.#models.get(id))!.layers} layers`,
        { id },
      );
    if (model && !this.#models.get(id)) this.#pendingModels.set(id, model);
  }

  /** Records to write beside the manifest once the artifact's directory exists (a fresh stage fetch). */
  readonly #pendingModels = new Map<string, ModelRecord>();

  async #prepare(id: string, status: TransferStatus, sources: TransferSource[]): Promise<ArtifactWriter> {
    // The pool starts its threads on first use (~0.1 s here): start one now, while the manifest is fetched, rather
    // than when the first chunks arrive and wait for it.
    void this.#o.runCpuTask?.('runtime.echo', null).catch(() => {});
    let manifestBytes = this.store.manifest(id)?.bytes;
    // A chain's upstream may not have started its own transfer yet (each node starts on its own): while no source
    // has the manifest, ask again for as long as a chunk request would wait for that upstream.
    const waitUntil = Date.now() + (sources.some((s) => s.waitForChunks) ? MAX_CHUNK_WAIT_MS : 0);
    for (;;) {
      for (const s of sources) {
        if (manifestBytes) break;
        for (const url of s.urls) {
          try {
            manifestBytes = Buffer.from(await this.#client.manifest(url, id));
            decodeManifest(manifestBytes, id);
            break;
          } catch {
            manifestBytes = undefined;
          }
        }
      }
      if (manifestBytes || Date.now() >= waitUntil || this.#abort.signal.aborted) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    if (!manifestBytes)
      throw new TorusError('TORUS_ARTIFACT_UNAVAILABLE', `no holder of ${id} answered with its manifest`, {
        id,
        sources: status.sources,
      });
    const manifest = decodeManifest(manifestBytes, id);
    const fresh = !this.store.info(id);
    const writer = ArtifactWriter.create(
      this.store.root,
      id,
      manifest,
      manifestBytes,
      { name: status.name, addedAt: Date.now() },
      {
        hash: this.#hash,
        // Kept to forward (a downstream asked): the receive buffer itself, back to the client's pool once evicted.
        onWritten: (index, data) =>
          this.#forwarding.has(id) &&
          Buffer.isBuffer(data) &&
          this.#recent.keep(id, index, data, (b) => this.#client.release(b)),
      },
    );
    const pendingModel = this.#pendingModels.get(id);
    this.#pendingModels.delete(id);
    if (pendingModel && !this.#models.get(id)) {
      writeModelFile(this.store.paths(id).dir, pendingModel);
      this.#models.forget(id);
    }
    let target: Uint8Array | undefined;
    if (status.stage) {
      try {
        target = this.stageSet(id, status.stage);
      } catch (error) {
        await writer.close();
        throw error;
      }
    }
    writer.setTarget(target);
    const info = this.store.info(id);
    // The copy's goal, kept for a restart: this stage, or (a whole fetch) the whole artifact.
    if (info && !info.complete) {
      const { stage: _old, ...rest } = info;
      writeInfo(this.store.paths(id).info, { ...rest, ...(status.stage ? { stage: status.stage } : {}) });
    }
    const targetBytes = target
      ? writer.refs.reduce((a, r, i) => a + (target[i] ? r.length : 0), 0)
      : totalBytes(manifest);
    const missing = targetBytes - writer.targetBytes;
    const free = await this.store.freeBytes();
    if (free < missing) {
      await writer.close();
      if (fresh) rmSync(this.store.paths(id).dir, { recursive: true, force: true });
      throw new TorusError(
        'TORUS_ARTIFACT_NO_SPACE',
        `node ${this.#o.nodeName} (${this.#o.nodeId}) cannot receive artifact ${id}: it needs ${missing} bytes, ${free} are free in ${this.store.root}: ${missing - free} bytes missing`,
        { node: this.#o.nodeId, id, neededBytes: missing, freeBytes: free, missingBytes: missing - free },
      );
    }
    this.#writers.set(id, writer);
    Object.assign(status, {
      state: 'running',
      chunks: target ? target.reduce((a, x) => a + x, 0) : writer.refs.length,
      bytes: targetBytes,
      have: writer.targetCount,
      haveBytes: writer.targetBytes,
    });
    this.#targets.set(id, target);
    return writer;
  }

  /** the chunk set of each running stage transfer */
  readonly #targets = new Map<string, Uint8Array | undefined>();

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
    void this.#sync.syncNow();
    try {
      const stats = await runTransfer({
        writer,
        sources,
        client: this.#client,
        signal: this.#abort.signal,
        onChunk: progress,
        ...(wanted ? { wanted } : {}),
        ...(this.#o.concurrency !== undefined ? { concurrency: this.#o.concurrency } : {}),
        ...(this.#o.stallMs !== undefined ? { stallMs: this.#o.stallMs } : {}),
        onCorrupt: (nodeId, chunk) => {
          status.corrupt[nodeId] = (status.corrupt[nodeId] ?? 0) + 1;
          this.#reports.push({ at: Date.now(), artifactId: id, nodeId, chunk });
          if (this.#reports.length > 100) this.#reports.shift();
          this.#o.log.warn('a peer served a corrupt artifact chunk; fetching it elsewhere', {
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
      this.#o.log.warn('artifact transfer failed', { id, error: e.message });
    } finally {
      status.endedAt = Date.now();
      this.#writers.delete(id);
      this.#targets.delete(id);
      this.#forwarding.delete(id);
      // The downstream may still be a few chunks behind: they stay a while, then the memory goes back.
      setTimeout(() => {
        if (!this.#writers.has(id)) this.#recent.drop(id);
      }, 30_000).unref();
      void this.#sync.syncNow();
      this.changes.bump();
    }
  }

  #sourcesOf(state: ClusterState, id: string, upstream?: string): TransferSource[] {
    const holders = sourcesFor(state, this.#o.nodeId, id);
    const toSource = (h: (typeof holders)[number], extra: Partial<TransferSource> = {}): TransferSource => ({
      nodeId: h.nodeId,
      urls: h.urls,
      complete: h.have === h.chunks,
      ...(h.rates ? { rates: h.rates } : {}),
      ...extra,
    });
    if (upstream === undefined) return holders.map((h) => toSource(h));
    const up = addressesOf(state, this.#o.nodeId, upstream);
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

  /** Orders `nodes` to receive `id` as a chain (see broadcast.ts). */
  async broadcast(id: string, nodes: readonly string[]): Promise<BroadcastAnswer> {
    artifactId(id);
    const state = await this.#o.cluster.state();
    return planBroadcast({
      state,
      me: this.#o.nodeId,
      id,
      nodes,
      order: async (node, upstream) => {
        if (node === this.#o.nodeId) return this.fetch(id, { upstream });
        const urls = addressesOf(state, this.#o.nodeId, node).urls;
        let last: unknown;
        for (const url of urls) {
          try {
            return await this.#client.orderFetch(url, id, { upstream });
          } catch (error) {
            last = error;
            if (asTorusError(error).code !== 'TORUS_API_UNREACHABLE') break;
          }
        }
        throw last ?? new TorusError('TORUS_NODE_UNKNOWN', `no address for node ${node}`);
      },
    });
  }

  async close(): Promise<void> {
    this.#abort.abort();
    this.#sync.close();
    await Promise.allSettled([...this.#running.values()]);
    await Promise.all([...this.#writers.values()].map((w) => w.close()));
    this.#client.close();
    this.store.closeReaders();
  }
}

export interface LocalHoldingView {
  readonly id: string;
  readonly name: string;
  readonly bytes: number;
  readonly chunks: number;
  readonly have: number;
  readonly complete: boolean;
}
