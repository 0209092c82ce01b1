/**
 * What this node's store holds, as the holdings sync announces it: each artifact with the chunks durable here (a
 * stage holding's layers), the receive rate of a transfer running into it; damaged ones left out, logged once.
 */
import { existsSync, statSync } from 'node:fs';
import type { Logger } from '../runtime/log.js';
import type { LocalHolding } from './holdings-sync.js';
import type { ModelStages } from './model-stages.js';
import type { ArtifactStore, DamagedArtifact } from './store.js';
import type { Transfers } from './transfers.js';

export class LocalHoldings {
  /** Damaged artifacts already logged (each once, until it is repaired or removed). */
  #damagedLogged = new Set<string>();

  constructor(
    private readonly store: ArtifactStore,
    private readonly stages: ModelStages,
    private readonly transfers: Transfers,
    private readonly log: Logger,
  ) {}

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
        this.log.warn('an artifact in the store does not verify; it is left out of what this node serves', {
          artifactId: d.id,
          name: d.name,
          reason: d.reason,
        });
    this.#damagedLogged = now;
    return scan;
  }

  list(): LocalHolding[] {
    const models = this.stages.models;
    return this.#noteDamaged(this.store.scan()).artifacts.map((a) => {
      const rateBps = a.complete ? 0 : this.transfers.rateBps(a.id);
      const have = a.complete ? a.chunks : this.partialCount(a.id);
      const stage = a.complete ? undefined : this.stages.heldStage(a.id, have);
      return {
        id: a.id,
        name: a.name,
        bytes: a.bytes,
        chunks: a.chunks,
        have,
        ...(rateBps > 0 ? { rateBps } : {}),
        ...(models.get(a.id) ? { model: models.get(a.id) } : {}),
        ...(stage ? { stage } : {}),
      };
    });
  }

  /** The durable chunks of a partial artifact: a running writer's count, else its journal's. */
  partialCount(id: string): number {
    const w = this.transfers.writer(id);
    if (w) return w.count;
    const journal = this.store.paths(id).journal;
    return existsSync(journal) ? Math.floor(statSync(journal).size / 4) : 0;
  }
}
