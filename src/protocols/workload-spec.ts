/**
 * What an instance runs: the built-in ring collective or an external command (`exec`), with its sizes. The one
 * definition of a workload: the cluster's commands and events carry `WorkloadSpec` (kind always set), and the
 * API's POST /v1/instances takes `WorkloadRequest`, the same branches with `kind` optional in the ring branch (its
 * default). Fields only an exec workload takes live in the exec branch, so a document, a check and a type all say so.
 */
import { ARTIFACT_ID_PATTERN } from './artifact-events.js';
import { Framework } from './calibration.js';
import { CLOSED, Count, IdField, W } from './event-fields.js';
import { LogsSpec } from './log-rotation.js';
import { canonical, compile, Rule, SAFE_KEY, StringEnum, Type, type Shape } from './schema-kit.js';

const ONE_PIB = 2 ** 50; // a pebibyte: anything above is a typo, not a workload

/**
 * What one step of the workload costs, for the planner's prediction (docs/placement.md, "Predicted step time"):
 * weights streamed per step, FLOPs per token, the activation passed between stages. All optional, with defaults.
 */
function workloadCostFields() {
  return {
    bytesPerLayer: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: ONE_PIB,
        description: 'weight bytes of one layer; default memoryBytes / layers',
      }),
    ),
    activationBytesPerToken: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2 ** 40,
        description: 'bytes a stage passes on per token; default hiddenSize × 2 (16-bit activations)',
      }),
    ),
    flopsPerTokenPerLayer: Type.Optional(
      Type.Number({
        minimum: 1,
        maximum: 1e18,
        description: 'FLOPs of one layer for one token; default 2 × bytesPerLayer (16-bit weights)',
      }),
    ),
    tokensPerStep: Type.Optional(Count(1, 1_000_000)),
    returnBytesPerStep: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 2 ** 40,
        description:
          "bytes a pipeline's last stage sends back to rank 0 each step (a sampled token id: 8); default the step's activations, like every other hop",
      }),
    ),
    contextTokens: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 100_000_000,
        description:
          'positions already in the KV cache when a step starts (decode: the context; 0: a prefill from scratch); naming it adds attention to the predicted step',
      }),
    ),
    kvBytesPerTokenPerLayer: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2 ** 40,
        description: 'KV-cache bytes of one position in one layer; default hiddenSize × 4 (K and V, 16-bit)',
      }),
    ),
    framework: Type.Optional(Framework),
  };
}

/** What every workload has, ring or exec: what placement reads. */
export const workloadFields = {
  id: IdField('workload (model) id; also the key of per-node cached fractions'),
  memoryBytes: Type.Integer({ minimum: 0, maximum: ONE_PIB, description: 'memory the whole workload needs, bytes' }),
  layers: Count(1, 100_000),
  hiddenSize: Type.Optional(Count(1, 10_000_000)),
  kvHeads: Type.Optional(Count(1, 100_000)),
  supportsTensor: Type.Optional(Type.Boolean()),
  logs: Type.Optional(LogsSpec),
  ...workloadCostFields(),
  model: Type.Optional(
    Type.String({
      pattern: ARTIFACT_ID_PATTERN.source,
      minLength: 64,
      maxLength: 64,
      description:
        'a model artifact (docs/artifacts.md, Models): its record gives memoryBytes (default: the weights), layers, hiddenSize, kvHeads and the real bytes of each pipeline stage (docs/placement.md, "A model workload"); a given field must agree with it (else 400); an id no node holds is 404, an artifact that is not a model 409',
    }),
  ),
  artifacts: Type.Optional(
    Type.Array(Type.String({ pattern: ARTIFACT_ID_PATTERN.source, minLength: 64, maxLength: 64 }), {
      maxItems: 64,
      description:
        'artifact ids (docs/artifacts.md) the workload needs on every node: placement prefers nodes holding them',
    }),
  ),
};

/** What happens when a job fails (torchrun's --max-restarts): `never`, or restart the whole group up to `max` times. */
export const RestartSpec = Type.Object(
  { policy: StringEnum(['never', 'on-failure']), max: Type.Optional(Count(0, 100)) },
  {
    ...CLOSED,
    description:
      'restart the whole job when a rank fails (torchrun --max-restarts); max defaults to 0 for never, 3 for on-failure',
  },
);
export type RestartSpec = { readonly policy: 'never' | 'on-failure'; readonly max: number };

/** What only an exec workload takes: the program and how to run it. */
const execFields = {
  restart: Type.Optional(RestartSpec),
  command: Type.String({ minLength: 1, maxLength: 4096, description: 'program to run' }),
  args: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 1024, description: 'its arguments' })),
  env: Type.Optional(
    Type.Record(
      Type.String({ pattern: `${SAFE_KEY}[A-Za-z_][A-Za-z0-9_]{0,255}$` }),
      Type.String({ maxLength: 65536 }),
      { additionalProperties: false, maxProperties: 1024, description: 'extra environment' },
    ),
  ),
  cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
};

export const RingWorkload = Type.Object(
  { kind: Type.Literal('ring'), ...workloadFields },
  { ...CLOSED, description: 'the built-in ring collective' },
);
export type RingWorkload = Shape<typeof RingWorkload>;

export const ExecWorkload = Type.Object(
  { kind: Type.Literal('exec'), ...workloadFields, ...execFields },
  { ...CLOSED, description: 'an external command on every node of the placement' },
);
/** Decoded, `restart.max` is always set (its default filled in). */
export type ExecWorkload = Omit<Shape<typeof ExecWorkload>, 'restart'> & { readonly restart?: RestartSpec };

export const WorkloadSpec = Type.Union([RingWorkload, ExecWorkload]);
export type WorkloadSpec = RingWorkload | ExecWorkload;

/**
 * The workload as an API client writes it: `kind` may be left out (ring). The branches exclude each other (only
 * the exec branch takes `kind: exec`, only the ring branch takes no kind), so "any of" is "exactly one of".
 */
/**
 * The workload fields as the API takes them: with `model`, the sizes its record gives may be left out (the API
 * fills them in before the cluster sees the workload, so commands and events always carry them).
 */
export const requestWorkloadFields = {
  ...workloadFields,
  memoryBytes: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: ONE_PIB,
      description: "memory the whole workload needs, bytes; with model: default the weights' bytes, at least them",
    }),
  ),
  layers: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: "with model: the model's" })),
};

/** An object that has these fields, whatever their values (the field's own schema checks them). */
const has = (...keys: readonly string[]) =>
  Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Unknown()])), { additionalProperties: true });

/** The rule across fields of an API workload: the sizes come from a model or are given. */
export const sizedByModelOrFields = () =>
  Rule(Type.Union([has('model'), has('memoryBytes', 'layers')]), '', 'needs model, or memoryBytes and layers');

export const WorkloadRequest = Type.Intersect(
  [
    Type.Union([
      Type.Object(
        { kind: Type.Optional(Type.Literal('ring', { description: 'the default' })), ...requestWorkloadFields },
        { ...CLOSED, description: 'the built-in ring collective (kind ring, the default)' },
      ),
      Type.Object(
        { kind: Type.Literal('exec'), ...requestWorkloadFields, ...execFields },
        { ...CLOSED, description: 'an external command on every node of the placement' },
      ),
    ]),
    sizedByModelOrFields(),
  ],
  { description: 'what to run: the built-in ring (kind absent or ring) or a command (kind exec)' },
);
export type WorkloadRequest = Shape<typeof WorkloadRequest>;

/** The one default the schema leaves to code: `restart.max` is 0 for `never`, 3 for `on-failure`. */
export function withWorkloadDefaults(w: Shape<typeof WorkloadSpec>): WorkloadSpec {
  if (w.kind !== 'exec' || !w.restart || w.restart.max !== undefined) return w as WorkloadSpec;
  return { ...w, restart: { policy: w.restart.policy, max: w.restart.policy === 'never' ? 0 : 3 } };
}

/** An API workload as the cluster carries it: `kind` filled in, and the sizes (given, or resolved from its model). */
export function workloadFromRequest(
  w: WorkloadRequest & { readonly memoryBytes: number; readonly layers: number },
): Shape<typeof WorkloadSpec> {
  return (w.kind === undefined ? { ...w, kind: 'ring' } : w) as Shape<typeof WorkloadSpec>;
}

const codec = compile(WorkloadSpec, W);
export function decodeWorkloadSpec(v: unknown, p: string): WorkloadSpec {
  return withWorkloadDefaults(canonical(codec.decode(v, p), W, p));
}
