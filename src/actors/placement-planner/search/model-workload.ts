/**
 * A workload that names a model artifact (`model: <id>`, docs/placement.md "A model workload"): its sizes come
 * from the model's record in the replicated state (`artifacts[id].model`, docs/artifacts.md "Models"), and the
 * planner weighs each pipeline stage by the real bytes of its tensors. `stageBytes` counts exactly the tensors
 * `stageTensors()` of src/artifacts/model/shard-writer.ts gives a stage: its blocks, `embed` on the first stage
 * (and on the last when the embeddings are tied), `norm` and `head` on the last, `all` on every stage.
 */
import { TorusError, ValidationError } from '../../../protocols/errors.js';
import type { ModelRecord } from '../../../protocols/model-record.js';
import type { ClusterState } from '../../topology-keeper/state.js';

/** The bytes of a model by where they go: per block, and the tensors outside the blocks. */
export interface ModelBytes {
  readonly layerBytes: readonly number[];
  readonly embed: number;
  readonly norm: number;
  readonly head: number;
  readonly all: number;
  readonly tiedEmbeddings: boolean;
}

export function modelBytesOf(m: ModelRecord): ModelBytes {
  const layerBytes = new Array<number>(m.layers).fill(0);
  const other = { embed: 0, norm: 0, head: 0, all: 0 };
  for (const [, , , , begin, end, layer] of m.tensors) {
    if (typeof layer === 'number') layerBytes[layer]! += end - begin;
    else other[layer] += end - begin;
  }
  return { layerBytes, ...other, tiedEmbeddings: m.tiedEmbeddings === true };
}

/** Every tensor's bytes once: the model's weights. */
export function weightBytes(mb: ModelBytes): number {
  return mb.layerBytes.reduce((s, b) => s + b, 0) + mb.embed + mb.norm + mb.head + mb.all;
}

/** The bytes of the tensors a pipeline stage holding layers [fromLayer, toLayer) needs (as stageTensors lists them). */
export function stageBytes(mb: ModelBytes, fromLayer: number, toLayer: number): number {
  const first = fromLayer === 0;
  const last = toLayer >= mb.layerBytes.length;
  let bytes = mb.all;
  for (let l = fromLayer; l < toLayer; l++) bytes += mb.layerBytes[l] as number;
  if (first || (last && mb.tiedEmbeddings)) bytes += mb.embed;
  if (last) bytes += mb.norm + mb.head;
  return bytes;
}

/** The mean bytes of a block: the one figure where a single per-layer size is needed (tensor sharding, FLOPs). */
export function meanLayerBytes(mb: ModelBytes): number {
  return Math.max(1, Math.round(mb.layerBytes.reduce((s, b) => s + b, 0) / mb.layerBytes.length));
}

/** The workload fields a model determines (a given one must agree) or defaults (`memoryBytes`). */
export interface ModelSizedFields {
  readonly model?: string | undefined;
  readonly memoryBytes?: number | undefined;
  readonly layers?: number | undefined;
  readonly hiddenSize?: number | undefined;
  readonly kvHeads?: number | undefined;
  readonly bytesPerLayer?: number | undefined;
}

/** The model record a workload names: 404 when no node holds the artifact, 409 when it is not a model. */
export function modelRecordFor(artifacts: ClusterState['artifacts'], id: string): ModelRecord {
  const record = artifacts && Object.hasOwn(artifacts, id) ? artifacts[id] : undefined;
  if (!record || Object.keys(record.holders).length === 0)
    throw new TorusError(
      'TORUS_ARTIFACT_UNKNOWN',
      `workload.model: no node holds artifact ${id} (add the model directory with \`torus artifacts add\`)`,
      { id },
    );
  if (!record.model)
    throw new TorusError(
      'TORUS_ARTIFACT_NOT_MODEL',
      `workload.model: artifact ${id} (${record.name}) is not a model: it was not added as a directory in the Hugging Face layout (config.json and safetensors files), so it has no layers to place`,
      { id },
    );
  return record.model;
}

/**
 * The workload with the model's sizes filled in: layers, hiddenSize, kvHeads from the record, memoryBytes the
 * weights' bytes unless given. A given field that contradicts the record is a 400 naming both; a given
 * memoryBytes may be larger than the weights (room for activations and KV cache), not smaller.
 */
export function resolveModelWorkload<W extends ModelSizedFields>(
  workload: W,
  artifacts: ClusterState['artifacts'],
): W & { memoryBytes: number; layers: number; hiddenSize?: number | undefined; kvHeads?: number | undefined } {
  const id = workload.model;
  if (id === undefined) {
    if (workload.memoryBytes === undefined || workload.layers === undefined)
      throw new ValidationError('body', 'workload', 'needs model, or memoryBytes and layers');
    return workload as W & { memoryBytes: number; layers: number };
  }
  const m = modelRecordFor(artifacts, id);
  const mb = modelBytesOf(m);
  const weights = weightBytes(mb);
  const name = `model ${id.slice(0, 12)}`;
  const contradiction = (field: string, given: number, what: string): ValidationError =>
    new ValidationError('body', `workload.${field}`, `${given} contradicts ${name}'s ${what}`);
  const agree = (field: 'layers' | 'hiddenSize' | 'kvHeads', value: number, what: string): void => {
    const given = workload[field];
    if (given !== undefined && given !== value) throw contradiction(field, given, `${value} ${what}`);
  };
  agree('layers', m.layers, 'layers');
  agree('hiddenSize', m.hiddenSize, 'hidden size');
  agree('kvHeads', m.kvHeads, 'kv heads');
  if (workload.memoryBytes !== undefined && workload.memoryBytes < weights)
    throw contradiction('memoryBytes', workload.memoryBytes, `${weights} bytes of weights`);
  const mean = mb.layerBytes.reduce((s, b) => s + b, 0) / m.layers;
  const given = workload.bytesPerLayer;
  if (given !== undefined && given !== Math.floor(mean) && given !== Math.ceil(mean) && given !== meanLayerBytes(mb))
    throw contradiction('bytesPerLayer', given, `${meanLayerBytes(mb)} bytes per layer (the mean of its blocks)`);
  return {
    ...workload,
    memoryBytes: workload.memoryBytes ?? weights,
    layers: m.layers,
    hiddenSize: m.hiddenSize,
    kvHeads: m.kvHeads,
  };
}
