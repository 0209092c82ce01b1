import { ValidationError } from '../../../protocols/errors.js';
import { Framework } from '../../../protocols/calibration.js';
import { compileWorded, StringEnum, Type, type TSchema } from '../../../protocols/schema-kit.js';
import type { InputWhere } from './placement-input.js';
import { meanLayerBytes, weightBytes, type ModelBytes } from './model-workload.js';
import { BACKENDS, SHARDINGS, type Backend, type Sharding } from '../../../protocols/placement-kinds.js';

export type { Backend, Sharding };
/** latency: least predicted step time; throughput: most predicted tokens/s with the pipeline kept full. */
export type Objective = 'latency' | 'throughput';

export interface Workload {
  readonly id: string;
  readonly memoryBytes: number;
  readonly layers: number;
  readonly hiddenSize?: number;
  readonly kvHeads?: number;
  readonly supportsTensor: boolean;
  /** bytes of the workload's artifacts (docs/artifacts.md): the explanation says how many each choice must move */
  readonly artifactBytes?: number;
  /** What one step costs (defaults filled by the decoder; see cost-model.ts). */
  readonly bytesPerLayer: number;
  /** Absent when neither it nor `hiddenSize` is given: hops then have no figure to predict with. */
  readonly activationBytesPerToken?: number;
  readonly flopsPerTokenPerLayer: number;
  readonly tokensPerStep: number;
  /**
   * Bytes the last stage sends back to rank 0 each step (a sampled token id: 8). Absent: the step's activations
   * (tokensPerStep × activationBytesPerToken), like every other hop.
   */
  readonly returnBytesPerStep?: number;
  /** Positions in the KV cache when a step starts: given, the prediction adds attention's reads and FLOPs. */
  readonly contextTokens?: number;
  /** KV-cache bytes of one position in one layer (default hiddenSize × 4) when contextTokens is given. */
  readonly kvBytesPerTokenPerLayer?: number;
  /** The framework the job runs: a node with calibrated figures for it is predicted with them (cost-model.ts). */
  readonly framework?: string;
  /**
   * A model workload's real bytes (model-workload.ts): the pipeline split, the memory check and the stage times
   * weigh each stage by the bytes of its tensors. Absent: every layer weighs bytesPerLayer.
   */
  readonly modelBytes?: ModelBytes;
}

/** What to place (the `--request` file of `torus plan`, or an API body). */
export interface PlacementRequest {
  readonly workload: Workload;
  readonly sharding: Sharding;
  readonly backend: Backend;
  readonly minNodes: number;
  readonly requiredNodes: readonly string[];
  readonly objective: Objective;
  /**
   * A pinned placement: exactly these nodes, rank 0 first (pinned-placement.ts). The decoder then sets
   * `requiredNodes` to them and `minNodes` to their count, so every rule about required nodes applies.
   */
  readonly nodes?: readonly string[];
  /**
   * A model pipeline's re-placement that keeps its surviving stages (kept-stages.ts): the old pipeline order with
   * null where a node left, and the layers of each stage. Survivors keep their position and layers; each null
   * gets a spare node, and the planner only chooses which.
   */
  readonly keepStages?: KeepStages;
}

export interface KeepStages {
  readonly nodes: readonly (string | null)[];
  readonly layers: readonly number[];
}

const Nullable = <S extends TSchema>(schema: S) => Type.Optional(Type.Union([schema, Type.Null()]));
const Count = (minimum: number) => Type.Integer({ minimum });

/** What to place as written (an API body, the `--request` file of `torus plan`); `decodePlacementRequest` fills defaults. */
export const PlacementRequestInput = Type.Object(
  {
    workload: Type.Object(
      {
        id: Type.String({ minLength: 1 }),
        memoryBytes: Type.Number({ minimum: 0 }),
        layers: Count(1),
        hiddenSize: Nullable(Count(1)),
        kvHeads: Nullable(Count(1)),
        supportsTensor: Type.Optional(Type.Boolean()),
        artifactBytes: Nullable(Count(0)),
        model: Nullable(Type.String({ minLength: 64, maxLength: 64 })),
        bytesPerLayer: Nullable(Count(1)),
        activationBytesPerToken: Nullable(Count(1)),
        flopsPerTokenPerLayer: Nullable(Type.Number({ minimum: 1 })),
        tokensPerStep: Nullable(Count(1)),
        returnBytesPerStep: Nullable(Count(0)),
        contextTokens: Nullable(Count(0)),
        kvBytesPerTokenPerLayer: Nullable(Count(1)),
        framework: Nullable(Framework),
        modelBytes: Nullable(
          Type.Object(
            {
              layerBytes: Type.Array(Count(0), { minItems: 1, maxItems: 1_000_000 }),
              embed: Count(0),
              norm: Count(0),
              head: Count(0),
              all: Count(0),
              tiedEmbeddings: Type.Boolean(),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    sharding: StringEnum(SHARDINGS),
    backend: StringEnum(BACKENDS),
    minNodes: Type.Optional(Count(1)),
    requiredNodes: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    objective: Type.Optional(StringEnum(['latency', 'throughput'] as const)),
    nodes: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, uniqueItems: true })),
    keepStages: Type.Optional(
      Type.Object(
        {
          nodes: Type.Array(Type.Union([Type.String({ minLength: 1 }), Type.Null()]), { minItems: 1 }),
          layers: Type.Array(Count(0), { minItems: 1 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const codecs = {
  body: compileWorded(PlacementRequestInput, 'body'),
  config: compileWorded(PlacementRequestInput, 'config'),
};

export function decodePlacementRequest(value: unknown, where: InputWhere = 'body', root = 'request'): PlacementRequest {
  const input = codecs[where].decode(value, root);
  const w = input.workload;
  const model = w.modelBytes ?? undefined;
  if (model && model.layerBytes.length !== w.layers)
    throw new ValidationError(
      where,
      `${root}.workload.modelBytes.layerBytes`,
      `${model.layerBytes.length} entries for ${w.layers} layers`,
    );
  if (model && weightBytes(model) === 0)
    throw new ValidationError(where, `${root}.workload.modelBytes`, 'a model of 0 bytes');
  const bytesPerLayer =
    w.bytesPerLayer ?? (model ? meanLayerBytes(model) : Math.max(1, Math.round(w.memoryBytes / w.layers)));
  const workload: { -readonly [K in keyof Workload]: Workload[K] } = {
    id: w.id,
    memoryBytes: w.memoryBytes,
    layers: w.layers,
    supportsTensor: w.supportsTensor ?? false,
    bytesPerLayer,
    flopsPerTokenPerLayer: w.flopsPerTokenPerLayer ?? 2 * bytesPerLayer,
    tokensPerStep: w.tokensPerStep ?? 1,
  };
  const activation = w.activationBytesPerToken ?? (typeof w.hiddenSize === 'number' ? w.hiddenSize * 2 : undefined);
  if (activation !== undefined) workload.activationBytesPerToken = activation;
  if (w.hiddenSize !== undefined && w.hiddenSize !== null) workload.hiddenSize = w.hiddenSize;
  if (w.artifactBytes !== undefined && w.artifactBytes !== null) workload.artifactBytes = w.artifactBytes;
  if (w.kvHeads !== undefined && w.kvHeads !== null) workload.kvHeads = w.kvHeads;
  if (model) workload.modelBytes = model;
  if (typeof w.returnBytesPerStep === 'number') workload.returnBytesPerStep = w.returnBytesPerStep;
  if (typeof w.contextTokens === 'number') workload.contextTokens = w.contextTokens;
  if (typeof w.kvBytesPerTokenPerLayer === 'number') workload.kvBytesPerTokenPerLayer = w.kvBytesPerTokenPerLayer;
  if (typeof w.framework === 'string') workload.framework = w.framework;
  const objective = input.objective ?? 'latency';
  const keepStages = input.keepStages ? checkKeepStages(input.keepStages, workload, input, where, root) : undefined;
  if (input.nodes) {
    // The pinned set is the whole set: a minimum or required nodes beside it would be ignored, so they are refused.
    if (input.minNodes !== undefined || input.requiredNodes !== undefined)
      throw new ValidationError(
        where,
        `${root ? `${root}.` : ''}nodes`,
        'cannot be combined with minNodes or requiredNodes (it names the whole set)',
      );
    const nodes = [...input.nodes];
    return {
      workload,
      sharding: input.sharding,
      backend: input.backend,
      minNodes: nodes.length,
      requiredNodes: nodes,
      objective,
      nodes,
    };
  }
  return {
    workload,
    sharding: input.sharding,
    backend: input.backend,
    minNodes: input.minNodes ?? 1,
    requiredNodes: [...new Set(input.requiredNodes ?? [])],
    objective,
    ...(keepStages ? { keepStages } : {}),
  };
}

/** A kept split must describe a whole model pipeline: one layer count per stage, every layer once, survivors once. */
function checkKeepStages(
  keep: KeepStages,
  workload: Workload,
  input: { sharding: Sharding; nodes?: readonly string[] | undefined },
  where: InputWhere,
  root: string,
): KeepStages {
  const field = `${root ? `${root}.` : ''}keepStages`;
  const bad = (why: string): ValidationError => new ValidationError(where, field, why);
  if (!workload.modelBytes) throw bad("needs workload.modelBytes (it keeps a model pipeline's stages)");
  if (input.sharding !== 'pipeline') throw bad('needs pipeline sharding');
  if (input.nodes) throw bad('cannot be combined with nodes (a pinned placement is not moved)');
  if (keep.nodes.length !== keep.layers.length)
    throw bad(`${keep.nodes.length} nodes for ${keep.layers.length} layer counts`);
  const total = keep.layers.reduce((s, l) => s + l, 0);
  if (total !== workload.layers) throw bad(`its stages hold ${total} layers, the workload has ${workload.layers}`);
  const named = keep.nodes.filter((n): n is string => n !== null);
  if (new Set(named).size !== named.length) throw bad('names a node twice');
  return { nodes: [...keep.nodes], layers: [...keep.layers] };
}
