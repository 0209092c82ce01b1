/**
 * A node's artifact service: its store, the transfers it runs (transfers.ts), the chunks it serves its peers
 * (chunk-serving.ts), the sync of its holdings into the replicated state (local-holdings.ts, holdings-sync.ts),
 * a user's writes to them (holding-writes.ts) and model stages (model-stages.ts), put together. Created by
 * startNode; the API routes (src/api/routes/artifact-routes.ts) and the peer handler call it.
 */
import { TorusError, asTorusError } from '../protocols/errors.js';
import type { ClusterState } from '../actors/topology-keeper/state.js';
import type { Logger } from '../runtime/log.js';
import { planBroadcast, type BroadcastAnswer } from './broadcast.js';
import { ChangeSignal } from './change-signal.js';
import { inlineHasher, poolHasher, type RunCpuTask } from './chunk-hasher.js';
import { ChunkServing } from './chunk-serving.js';
import { Forwarding } from './forwarding.js';
import { HoldingWrites, type LocalHoldingView } from './holding-writes.js';
import { HoldingsSync, type ClusterPort, type LocalHolding } from './holdings-sync.js';
import { artifactId } from './ids.js';
import { JournalBits } from './journal-bits.js';
import { storeRoot } from './layout.js';
import { LocalHoldings } from './local-holdings.js';
import { ModelStages, type StageProgress } from './model-stages.js';
import type { LayerRange } from './model/stage-chunks.js';
import { PeerClient } from './peer-client.js';
import { createPeerHandler } from './peer-server.js';
import { addressesOf } from './sources.js';
import { ArtifactStore, type DamagedArtifact } from './store.js';
import type { CorruptionReport, TransferStatus } from './transfer-status.js';
import { Transfers } from './transfers.js';

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

export class ArtifactService {
  readonly store: ArtifactStore;
  readonly dataKey: string | null;
  /** bumped when a transfer ends: the runner gate answers on it instead of at its next poll */
  readonly changes = new ChangeSignal();
  readonly peerHandler: ReturnType<typeof createPeerHandler>;
  readonly #o: ArtifactServiceOptions;
  readonly #client: PeerClient;
  readonly #abort = new AbortController();
  readonly #sync: HoldingsSync;
  readonly #stages: ModelStages;
  readonly #transfers: Transfers;
  readonly #serving: ChunkServing;
  readonly #holdings: LocalHoldings;
  readonly #writes: HoldingWrites;

  constructor(o: ArtifactServiceOptions) {
    this.#o = o;
    this.dataKey = o.dataKey;
    const store = new ArtifactStore(storeRoot(o.dataDir));
    this.store = store;
    this.#client = new PeerClient(o.dataKey, o.nodeId);
    /** the chunks a partial artifact with no transfer running holds (its journal), for serving and holdings */
    const journals = new JournalBits((id) => store.paths(id).journal);
    const forwarding = new Forwarding();
    this.#stages = new ModelStages(store, journals);
    this.#sync = new HoldingsSync(
      o.nodeId,
      o.cluster,
      () => this.#holdings.list(),
      o.syncIntervalMs ?? 2000,
      10_000,
      (error) => o.log.debug('artifact holdings not synced yet', { error: asTorusError(error).message }),
    );
    this.#transfers = new Transfers({
      nodeId: o.nodeId,
      nodeName: o.nodeName,
      store,
      client: this.#client,
      hash: o.runCpuTask ? poolHasher(o.runCpuTask) : inlineHasher,
      runCpuTask: o.runCpuTask,
      stages: this.#stages,
      forwarding,
      signal: this.#abort.signal,
      cluster: o.cluster,
      log: o.log,
      sync: this.#sync,
      changes: this.changes,
      concurrency: o.concurrency,
      stallMs: o.stallMs,
    });
    this.#serving = new ChunkServing(
      o.dataKey,
      store,
      journals,
      forwarding,
      (id) => this.#transfers.writer(id),
      (id) => this.#transfers.has(id),
      this.#abort.signal,
      (id, body) => this.fetch(id, body),
    );
    this.peerHandler = createPeerHandler(this.#serving);
    this.#holdings = new LocalHoldings(store, this.#stages, this.#transfers, o.log);
    this.#writes = new HoldingWrites({
      nodeId: o.nodeId,
      dataDir: o.dataDir,
      cluster: o.cluster,
      store,
      sync: this.#sync,
      holdings: this.#holdings,
      stages: this.#stages,
      journals,
      forwarding,
      transfers: this.#transfers,
    });
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
      void this.#transfers.resumeLater(a.id, stage);
    }
  }

  /** The store's artifacts that do not verify (see LocalHoldings.damaged). */
  damaged(): DamagedArtifact[] {
    return this.#holdings.damaged();
  }

  localHoldings(): LocalHolding[] {
    return this.#holdings.list();
  }

  stageProgress(id: string, stage: LayerRange): StageProgress | undefined {
    return this.#stages.stageProgress(id, stage);
  }

  /** Chunks of `id` held here (see ChunkServing.haveSet). */
  haveSet(id: string): Uint8Array | undefined {
    return this.#serving.haveSet(id);
  }

  /** The replicated state as this node has applied it. */
  clusterState(): Promise<ClusterState> {
    return this.#o.cluster.state();
  }

  announce(id: string): Promise<LocalHoldingView> {
    return this.#writes.announce(id);
  }

  remove(id: string): Promise<{ removed: boolean }> {
    return this.#writes.remove(id);
  }

  transfers(): { transfers: TransferStatus[]; corruption: CorruptionReport[] } {
    return this.#transfers.list();
  }

  transfer(id: string): TransferStatus | undefined {
    return this.#transfers.get(id);
  }

  /** Fetches `id` into this node's store (see Transfers.fetch). */
  fetch(id: string, opts: { upstream?: string; name?: string; stage?: LayerRange } = {}): Promise<TransferStatus> {
    return this.#transfers.fetch(id, opts);
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
    await this.#transfers.close();
    this.#client.close();
    this.store.closeReaders();
  }
}
