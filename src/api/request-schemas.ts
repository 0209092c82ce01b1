import { compile, SAFE_KEY, StringEnum, Type, type Shape } from '../protocols/schema-kit.js';

/**
 * Request bodies the API accepts, as TypeBox schemas (src/protocols/schema-kit.ts): the same object validates
 * at the edge (the compiled codecs below), types the handlers (`Shape<...>`) and is served in the OpenAPI
 * document. The placement request follows the `plan` command's format (issue 5 / docs/placement.md); instance
 * creation adds what the runner needs to start a workload.
 */
const nodeId = Type.String({ minLength: 1, maxLength: 256 });
const ONE_PIB = 2 ** 50; // a pebibyte: anything above is a typo, not a workload

const workloadProperties = {
  id: Type.String({ minLength: 1, maxLength: 256, description: 'workload (model) id; also the key of per-node cached fractions' }),
  memoryBytes: Type.Integer({ minimum: 0, maximum: ONE_PIB, description: 'memory the whole workload needs, bytes' }),
  layers: Type.Integer({ minimum: 1, maximum: 100_000 }),
  hiddenSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  kvHeads: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  supportsTensor: Type.Optional(Type.Boolean()),
};

const placementProperties = {
  sharding: Type.Optional(StringEnum(['pipeline', 'tensor'])),
  backend: Type.Optional(StringEnum(['ring', 'jaccl'])),
  minNodes: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096 })),
  requiredNodes: Type.Optional(Type.Array(nodeId, { maxItems: 4096 })),
};

/** POST /v1/placements/preview: the request of the `plan` command. */
export const PreviewRequest = Type.Object({
  workload: Type.Object(workloadProperties, { additionalProperties: false }),
  ...placementProperties,
}, { additionalProperties: false, description: 'a placement request, as the `plan` command reads it' });
export type PreviewRequest = Shape<typeof PreviewRequest>;

/**
 * POST /v1/instances: the placement request plus how to run it (`ring` built in, or `exec` a command) — the
 * body of the cluster's `PlaceInstance` command (src/protocols/events.ts) without `type`.
 */
export const CreateInstanceRequest = Type.Object({
  workload: Type.Object({
    ...workloadProperties,
    kind: Type.Optional(StringEnum(['ring', 'exec'], { description: 'runner workload; default ring' })),
    command: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'program to run (kind=exec, required there)' })),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 256, description: 'its arguments' })),
    env: Type.Optional(Type.Record(Type.String({ pattern: SAFE_KEY }), Type.String({ maxLength: 65536 }), { additionalProperties: false, description: 'extra environment' })),
    cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    artifacts: Type.Optional(Type.Array(Type.String({ minLength: 64, maxLength: 64 }), {
      maxItems: 64, description: 'artifact ids the workload needs (docs/artifacts.md): placement prefers their holders',
    })),
    restart: Type.Optional(Type.Object({
      policy: StringEnum(['never', 'on-failure']),
      max: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    }, { additionalProperties: false, description: 'kind=exec: restart the whole job when a rank fails (torchrun --max-restarts)' })),
  }, { additionalProperties: false }),
  ...placementProperties,
  instanceId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'choose the id (default: the leader picks one)' })),
}, { additionalProperties: false, description: 'place a workload and start its runners' });
export type CreateInstanceRequest = Shape<typeof CreateInstanceRequest>;

/** POST /v1/bench/ring: nccl-tests style sweep over chosen nodes (all nodes when omitted). */
export const RingBenchRequest = Type.Object({
  nodes: Type.Optional(Type.Array(nodeId, { minItems: 1, maxItems: 4096, description: 'node ids; default: every node' })),
  ops: Type.Optional(Type.Array(StringEnum(['all-reduce', 'all-gather', 'broadcast', 'send-recv']), { minItems: 1, maxItems: 4 })),
  dtype: Type.Optional(StringEnum(['float32', 'float16', 'int32'])),
  minBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 ** 34, description: 'nccl-tests -b' })),
  maxBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 ** 34, description: 'nccl-tests -e' })),
  stepFactor: Type.Optional(Type.Integer({ minimum: 2, maximum: 1024, description: 'nccl-tests -f' })),
  iterations: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'nccl-tests -n' })),
  warmup: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'nccl-tests -w' })),
  bidirectional: Type.Optional(Type.Boolean({ description: 'use both ring directions' })),
  gloo: Type.Optional(Type.Boolean({
    description: "after the ring, run torch Gloo's all_reduce on the same nodes at the ring's all-reduce sizes (an exec job of torus's own "
      + 'gloo_rank.py under glooPython: every node must allow that interpreter with --allow-exec, else 409) and return its rows and ring ÷ Gloo',
  })),
  glooPython: Type.Optional(Type.String({ minLength: 2, maxLength: 4096, pattern: '^/', description: 'absolute path of the interpreter with torch on the nodes; default /usr/bin/python3' })),
}, { additionalProperties: false, description: 'start a ring benchmark on the live cluster' });
export type RingBenchRequest = Shape<typeof RingBenchRequest>;

/** POST /v1/links/measure: which of this node's links to re-measure (all when empty). */
export const MeasureLinksRequest = Type.Object({
  peer: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'only links to this node id' })),
  ip: Type.Optional(Type.String({ minLength: 2, maxLength: 64, description: "only the link at this address (one of the peer's IPs)" })),
}, { additionalProperties: false, description: "re-measure this node's links now; both filters optional (together: the link to that peer at that address)" });
export type MeasureLinksRequest = Shape<typeof MeasureLinksRequest>;

/** Every request body schema, by its OpenAPI component name. */
export const requestSchemas = { PreviewRequest, CreateInstanceRequest, RingBenchRequest, MeasureLinksRequest };

/** The compiled checks the routes run (ValidationError 'body' naming the field). */
export const requestCodecs = {
  preview: compile(PreviewRequest, 'body'),
  createInstance: compile(CreateInstanceRequest, 'body'),
  ringBench: compile(RingBenchRequest, 'body'),
  measureLinks: compile(MeasureLinksRequest, 'body'),
};
