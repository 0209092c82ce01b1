/**
 * A user's writes to this node's holdings (`artifacts add` then announce, `artifacts rm`): each answers once this
 * node's own state shows it, so the user's next command sees it here.
 */
import { TorusError } from '../protocols/errors.js';
import type { ClusterState } from '../actors/topology-keeper/state.js';
import type { Forwarding } from './forwarding.js';
import type { ClusterPort, HoldingsSync } from './holdings-sync.js';
import { artifactId } from './ids.js';
import type { JournalBits } from './journal-bits.js';
import type { LocalHoldings } from './local-holdings.js';
import type { ModelStages } from './model-stages.js';
import type { ArtifactStore } from './store.js';
import type { Transfers } from './transfers.js';

/** How long a user's write (announce, remove) waits for this node to apply it before saying it is on its way. */
export const READ_YOUR_WRITES_MS = 10_000;

export interface LocalHoldingView {
  readonly id: string;
  readonly name: string;
  readonly bytes: number;
  readonly chunks: number;
  readonly have: number;
  readonly complete: boolean;
}

export interface HoldingWritesDeps {
  readonly nodeId: string;
  readonly dataDir: string;
  readonly cluster: ClusterPort;
  readonly store: ArtifactStore;
  readonly sync: HoldingsSync;
  readonly holdings: LocalHoldings;
  readonly stages: ModelStages;
  readonly journals: JournalBits;
  readonly forwarding: Forwarding;
  readonly transfers: Transfers;
}

export class HoldingWrites {
  constructor(private readonly d: HoldingWritesDeps) {}

  /**
   * After `artifacts add` wrote the store (or `artifacts fetch` completed): announce it now rather than at the next
   * sync, and answer once this node's own state shows the holding, so the user's next command (a broadcast, a run)
   * sees it here. Committed on the leader is not enough: a follower applies the entry a heartbeat later.
   */
  async announce(id: string): Promise<LocalHoldingView> {
    const { d } = this;
    d.stages.models.forget(id); // `add` may just have written its model record
    const described = d.store.describe(artifactId(id));
    if (!described)
      throw new TorusError('TORUS_ARTIFACT_UNKNOWN', `artifact ${id} is not in the store of this node (${d.dataDir})`, {
        id,
      });
    const have = described.complete ? described.chunks : d.holdings.partialCount(id);
    await d.sync.syncOrThrow();
    await this.#applied(
      (state) => state.artifacts?.[id]?.holders[d.nodeId]?.have === have,
      `this node holds artifact ${id}`,
    );
    return { ...described, have };
  }

  async remove(id: string): Promise<{ removed: boolean }> {
    const { d } = this;
    artifactId(id);
    if (d.transfers.busy(id))
      throw new TorusError('TORUS_ARTIFACT_BUSY', `artifact ${id} is being transferred; wait for it to end`, { id });
    d.forwarding.recent.drop(id);
    const removed = d.store.remove(id);
    d.stages.forget(id);
    d.journals.forget(id);
    if (!removed) throw new TorusError('TORUS_ARTIFACT_UNKNOWN', `artifact ${id} is not on this node`, { id });
    d.transfers.forget(id);
    await d.sync.syncOrThrow();
    await this.#applied(
      (state) => !Object.hasOwn(state.artifacts?.[id]?.holders ?? {}, d.nodeId),
      `this node no longer holds artifact ${id}`,
    );
    return { removed };
  }

  /** Waits until this node applied what a user's command wrote (READ_YOUR_WRITES_MS at most). */
  #applied(done: (state: ClusterState) => boolean, what: string): Promise<void> {
    const { nodeId } = this.d;
    return this.d.cluster.until(
      (state) => Object.hasOwn(state.nodes, nodeId) && done(state),
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
}
