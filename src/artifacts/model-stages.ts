/**
 * Which chunks of a model artifact a pipeline stage (a range of layers) needs, and how far this node's copy holds
 * them. A stage's chunk set is a function of the manifest and the model record (it never changes): cached.
 */
import { TorusError } from '../protocols/errors.js';
import type { ModelRecord } from '../protocols/model-record.js';
import type { ArtifactStage } from '../protocols/artifact-events.js';
import type { JournalBits } from './journal-bits.js';
import { StoredModels, writeModelFile } from './model/model-store.js';
import { stageChunks, type LayerRange } from './model/stage-chunks.js';
import type { ArtifactStore } from './store.js';

export interface StageProgress {
  readonly have: number;
  readonly chunks: number;
  readonly haveBytes: number;
  readonly bytes: number;
  readonly complete: boolean;
}

export class ModelStages {
  readonly models: StoredModels;
  /** a stage's chunk set by artifact and layers */
  readonly #sets = new Map<string, Uint8Array>();
  /** Records to write beside the manifest once the artifact's directory exists (a fresh stage fetch). */
  readonly #pending = new Map<string, ModelRecord>();

  constructor(
    private readonly store: ArtifactStore,
    private readonly journals: JournalBits,
  ) {
    this.models = new StoredModels((id) => store.paths(id).dir);
  }

  /** The chunks of layers `stage` of model artifact `id` (undefined: no manifest or no record here). */
  stageSet(id: string, stage: LayerRange): Uint8Array | undefined {
    const key = `${id}:${stage.fromLayer}-${stage.toLayer}`;
    const cached = this.#sets.get(key);
    if (cached) return cached;
    const m = this.store.manifest(id);
    const model = this.models.get(id);
    if (!m || !model) return undefined;
    const set = new Uint8Array(m.refs.length);
    for (const i of stageChunks(m.manifest, model, stage)) set[i] = 1;
    if (this.#sets.size >= 256) this.#sets.delete(this.#sets.keys().next().value!);
    this.#sets.set(key, set);
    return set;
  }

  /**
   * How far this node's copy of model artifact `id` holds layers `stage`: durable chunks of the stage (`have`,
   * `haveBytes`) against the stage's (`chunks`, `bytes`); undefined while the store has no manifest or record.
   */
  stageProgress(id: string, stage: LayerRange): StageProgress | undefined {
    const set = this.stageSet(id, stage);
    const refs = this.store.manifest(id)?.refs;
    if (!set || !refs) return undefined;
    const complete = this.store.info(id)?.complete === true;
    // The journal, not a running writer's `have`: it names only chunks already synced (durable).
    const held = complete ? undefined : this.journals.bits(id, refs.length);
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

  /** A partial artifact held for a stage: its layers and how many of the stage's chunks are durable here. */
  heldStage(id: string, have: number): ArtifactStage | undefined {
    const stage = this.store.info(id)?.stage;
    const p = stage && this.stageProgress(id, stage);
    if (!stage || !p) return undefined;
    return { fromLayer: stage.fromLayer, toLayer: stage.toLayer, have: Math.min(p.have, have), chunks: p.chunks };
  }

  /**
   * A stage fetch needs the model's record to know its chunks: the state's (checked by the event and snapshot
   * decoders), kept beside the manifest so the holding, a restart and the shard directory have it.
   */
  keepModel(id: string, model: ModelRecord | undefined, stage: LayerRange): void {
    if (!model && !this.models.get(id))
      throw new TorusError(
        'TORUS_MODEL_INVALID',
        `artifact ${id} has no model record: it cannot be fetched by layers`,
        {
          id,
        },
      );
    if (stage.fromLayer >= stage.toLayer || stage.toLayer > (model ?? this.models.get(id))!.layers)
      throw new TorusError(
        'TORUS_API_VALIDATION',
        `layers ${stage.fromLayer}–${stage.toLayer} are not a stage of a model of ${(model ?? this.models.get(id))!.layers} layers`,
        { id },
      );
    if (model && !this.models.get(id)) this.#pending.set(id, model);
  }

  /** Writes the record keepModel held back, now that the artifact's directory exists. */
  writePending(id: string): void {
    const pendingModel = this.#pending.get(id);
    this.#pending.delete(id);
    if (pendingModel && !this.models.get(id)) {
      writeModelFile(this.store.paths(id).dir, pendingModel);
      this.models.forget(id);
    }
  }

  /** Forgets what was cached of `id` (removed from the store). */
  forget(id: string): void {
    this.models.forget(id);
    for (const key of [...this.#sets.keys()]) if (key.startsWith(`${id}:`)) this.#sets.delete(key);
  }
}
