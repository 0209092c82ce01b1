import { chosenInstanceId, placementFields } from '../protocols/commands.js';
import { IdField, IpAddress } from '../protocols/event-fields.js';
import { Framework } from '../protocols/calibration.js';
import { compile, Rule, StringEnum, Type, type Shape } from '../protocols/schema-kit.js';
import {
  requestWorkloadFields,
  sizedByModelOrFields,
  workloadFields,
  WorkloadRequest,
} from '../protocols/workload-spec.js';

/**
 * Request bodies the API accepts, as TypeBox schemas (src/protocols/schema-kit.ts): the same object validates
 * at the edge (the compiled codecs below), types the handlers (`Shape<...>`) and is served in the OpenAPI
 * document. Their fields are the cluster's own (src/protocols/workload-spec.ts, commands.ts): what the document
 * calls valid here is what the leader accepts, so a body is refused for its shape only at this edge, in the
 * caller's words. The placement request follows the `plan` command's format (docs/placement.md); instance
 * creation adds what the runner needs to start a workload.
 */
const nodeId = IdField('a node id');
// A preview places the workload's sizes only; the artifacts it needs count once it is created, and how its logs
// rotate matters only to the runners (the planner reads neither).
const { artifacts: _artifacts, logs: _logs, ...placedFields } = workloadFields;
const { artifacts: _a, logs: _l, ...previewFields } = requestWorkloadFields;

/**
 * An object that has these fields, whatever their values (the field's own schema checks them) and whatever else
 * it has (the shape beside the rule closes it): a term of a rule across fields.
 */
const has = <K extends string>(...keys: readonly K[]) =>
  Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Unknown()])) as Record<K, ReturnType<typeof Type.Unknown>>, {
    additionalProperties: true,
  });

/** `nodes` pins the whole set: a minimum or required nodes beside it would be ignored, so the schema refuses them. */
const pinnedAlone = () =>
  Rule(
    Type.Not(Type.Union([has('nodes', 'minNodes'), has('nodes', 'requiredNodes')])),
    'nodes',
    'cannot be combined with minNodes or requiredNodes (it names the whole set)',
  );

/** POST /v1/placements/preview: the request of the `plan` command; the sizes given or from a model (pinned `nodes`: every option on that set). */
export const PreviewRequest = Type.Intersect(
  [
    Type.Object(
      {
        workload: Type.Intersect(
          [Type.Object(previewFields, { additionalProperties: false }), sizedByModelOrFields()],
          {
            description: 'what to place',
          },
        ),
        ...placementFields,
      },
      { additionalProperties: false },
    ),
    pinnedAlone(),
  ],
  { description: 'a placement request, as the `plan` command reads it' },
);
export type PreviewRequest = Shape<typeof PreviewRequest>;

/**
 * POST /v1/instances: the placement request plus how to run it (`ring` built in, or `exec` a command): the body
 * of the cluster's `PlaceInstance` command (src/protocols/commands.ts) without `type`, `kind` defaulting to ring.
 */
export const CreateInstanceRequest = Type.Intersect(
  [
    Type.Object(
      {
        workload: WorkloadRequest,
        ...placementFields,
        instanceId: chosenInstanceId,
      },
      { additionalProperties: false },
    ),
    pinnedAlone(),
  ],
  { description: 'place a workload and start its runners' },
);
export type CreateInstanceRequest = Shape<typeof CreateInstanceRequest>;

/** POST /v1/bench/ring: nccl-tests style sweep over chosen nodes (all nodes when omitted). */
export const RingBenchRequest = Type.Object(
  {
    nodes: Type.Optional(
      Type.Array(nodeId, { minItems: 1, maxItems: 4096, description: 'node ids; default: every node' }),
    ),
    ops: Type.Optional(
      Type.Array(StringEnum(['all-reduce', 'all-gather', 'broadcast', 'send-recv']), { minItems: 1, maxItems: 4 }),
    ),
    dtype: Type.Optional(StringEnum(['float32', 'float16', 'int32'])),
    minBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 ** 34, description: 'nccl-tests -b' })),
    maxBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 ** 34, description: 'nccl-tests -e' })),
    stepFactor: Type.Optional(Type.Integer({ minimum: 2, maximum: 1024, description: 'nccl-tests -f' })),
    iterations: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'nccl-tests -n' })),
    warmup: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'nccl-tests -w' })),
    bidirectional: Type.Optional(Type.Boolean({ description: 'use both ring directions' })),
    gloo: Type.Optional(
      Type.Boolean({
        description:
          "after the ring, run torch Gloo's all_reduce on the same nodes at the ring's all-reduce sizes (an exec job of torus's own " +
          'gloo_rank.py under glooPython: every node must allow that interpreter with --allow-exec, else 409) and return its rows and ring ÷ Gloo',
      }),
    ),
    glooPython: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 4096,
        pattern: '^/',
        description: 'absolute path of the interpreter with torch on the nodes; default /usr/bin/python3',
      }),
    ),
  },
  { additionalProperties: false, description: 'start a ring benchmark on the live cluster' },
);
export type RingBenchRequest = Shape<typeof RingBenchRequest>;

/** POST /v1/links/measure: which of this node's links to re-measure (all when empty). */
export const MeasureLinksRequest = Type.Object(
  {
    peer: Type.Optional(IdField('only links to this node id')),
    ip: Type.Optional(IpAddress("only the link at this address (one of the peer's IPs)")),
  },
  {
    additionalProperties: false,
    description:
      "re-measure this node's links now; both filters optional (together: the link to that peer at that address)",
  },
);
export type MeasureLinksRequest = Shape<typeof MeasureLinksRequest>;

/** POST /v1/artifacts/{id}/broadcast: the chain's nodes, given in order or as an instance's ring order. */
export const BroadcastRequest = Type.Union(
  [
    Type.Object(
      { nodes: Type.Array(nodeId, { minItems: 1, maxItems: 1024, description: 'the chain, head first' }) },
      { additionalProperties: false },
    ),
    Type.Object({ instance: IdField('an instance id: its ring order is the chain') }, { additionalProperties: false }),
  ],
  { description: 'either nodes or instance' },
);
export type BroadcastRequest = Shape<typeof BroadcastRequest>;

/**
 * POST /v1/bench/pipeline: the workload to place (its sizes and cost description) and how long to run it. The
 * two rules across fields are part of the schema (so the document states them and the same check enforces
 * them): the workload needs an activation size (a pipeline passes activations from stage to stage), and `nodes`,
 * which names the whole set, goes with neither minNodes nor requiredNodes (they would be ignored).
 */
export const PipelineBenchRequest = Type.Intersect(
  [
    Type.Object(
      {
        workload: Type.Intersect(
          [
            Type.Object(placedFields, { additionalProperties: false }),
            Rule(
              Type.Union([has('hiddenSize'), has('activationBytesPerToken')]),
              '',
              'needs hiddenSize or activationBytesPerToken (the bytes a stage passes on per token)',
            ),
          ],
          { description: 'what to place and run' },
        ),
        objective: placementFields.objective,
        minNodes: placementFields.minNodes,
        requiredNodes: placementFields.requiredNodes,
        nodes: Type.Optional(
          Type.Array(nodeId, {
            minItems: 1,
            maxItems: 1024,
            uniqueItems: true,
            description:
              'run on exactly this option: these nodes in this ring (rank) order; the planner splits the layers and picks ' +
              'the addresses but does not choose the set or order. Not with minNodes or requiredNodes',
          }),
        ),
        steps: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'timed steps (default 10)' })),
        warmup: Type.Optional(
          Type.Integer({ minimum: 0, maximum: 1000, description: 'untimed steps first (default 2)' }),
        ),
      },
      { additionalProperties: false },
    ),
    pinnedAlone(),
  ],
  { description: 'a pipeline benchmark: the placement request of a workload' },
);
export type PipelineBenchRequest = Shape<typeof PipelineBenchRequest>;

/** Operations that take no fields (announce, fetch): an empty object, or no body at all. */
export const EmptyRequest = Type.Object({}, { additionalProperties: false, description: 'no fields' });

/** POST /v1/calibrations: run a framework's calibration command on nodes (docs/placement.md, "Calibrated figures"). */
export const CalibrationRequest = Type.Object(
  {
    framework: Framework,
    command: Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), {
      minItems: 1,
      maxItems: 256,
      description:
        "argv run on each node as a one-rank exec job (the node's --allow-exec must allow it); it prints one torusCalibration JSON line",
    }),
    nodes: Type.Optional(
      Type.Array(nodeId, { minItems: 1, maxItems: 4096, uniqueItems: true, description: 'default: every node' }),
    ),
    timeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1000,
        maximum: 600_000,
        description: 'how long the command may run per node; default 60000',
      }),
    ),
  },
  { additionalProperties: false, description: 'measure what a framework achieves on each node and record it' },
);

/** Every request body schema, by its OpenAPI component name. */
export const requestSchemas = {
  PreviewRequest,
  CreateInstanceRequest,
  RingBenchRequest,
  PipelineBenchRequest,
  MeasureLinksRequest,
  CalibrationRequest,
  BroadcastRequest,
  EmptyRequest,
};

/** The compiled checks the routes run (ValidationError 'body' naming the field). */
export const requestCodecs = {
  preview: compile(PreviewRequest, 'body'),
  createInstance: compile(CreateInstanceRequest, 'body'),
  ringBench: compile(RingBenchRequest, 'body'),
  pipelineBench: compile(PipelineBenchRequest, 'body'),
  measureLinks: compile(MeasureLinksRequest, 'body'),
  calibration: compile(CalibrationRequest, 'body'),
  broadcast: compile(BroadcastRequest, 'body'),
  empty: compile(EmptyRequest, 'body'),
};

/**
 * Query strings, one schema each: the route checks the parameters with it (src/api/query.ts) and the document
 * lists them from it, so every bound the server checks (a rank's, a tail's) is the one the document shows.
 * Unknown parameters are ignored, as HTTP clients expect.
 */
export const MAX_LOG_TAIL = 16 * 1024 * 1024;
export const LogsQuery = Type.Object({
  rank: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 999_999, description: 'the rank whose output to read; default 0' }),
  ),
  stream: Type.Optional(StringEnum(['stdout', 'stderr'], { description: 'default stdout' })),
  follow: Type.Optional(
    StringEnum(['1', 'true', '0', 'false'], {
      description: '1 or true: keep the answer open until the rank has ended for good',
    }),
  ),
  tail: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MAX_LOG_TAIL, description: 'start this many bytes before the end' }),
  ),
});
export type LogsQuery = Shape<typeof LogsQuery>;

export const queryCodecs = {
  logs: compile(LogsQuery, 'query'),
};
