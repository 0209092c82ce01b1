import type { Schema } from './schema.js';

/**
 * Request bodies the API accepts, in the one schema language (./schema.ts) that both validates and is
 * rendered into the OpenAPI document. The placement request follows the `plan` command's format
 * (issue 5 / docs/placement.md); instance creation adds what the runner needs to start a workload.
 */
const nodeId: Schema = { kind: 'string', minLength: 1, maxLength: 256 };
const ONE_PIB = 2 ** 50; // a pebibyte: anything above is a typo, not a workload

const workloadProperties = {
  id: { kind: 'string', minLength: 1, maxLength: 256, description: 'workload (model) id; also the key of per-node cached fractions' },
  memoryBytes: { kind: 'integer', minimum: 0, maximum: ONE_PIB, description: 'memory the whole workload needs, bytes' },
  layers: { kind: 'integer', minimum: 1, maximum: 100_000 },
  hiddenSize: { kind: 'integer', minimum: 1, maximum: 10_000_000 },
  kvHeads: { kind: 'integer', minimum: 1, maximum: 100_000 },
  supportsTensor: { kind: 'boolean' },
} as const satisfies Record<string, Schema>;

const placementProperties = {
  sharding: { kind: 'string', enum: ['pipeline', 'tensor'] },
  backend: { kind: 'string', enum: ['ring', 'jaccl'] },
  minNodes: { kind: 'integer', minimum: 1, maximum: 4096 },
  requiredNodes: { kind: 'array', items: nodeId, maxItems: 4096 },
} as const satisfies Record<string, Schema>;

/** POST /v1/placements/preview: the request of the `plan` command. */
export const previewRequestSchema: Schema = {
  kind: 'object',
  description: 'a placement request, as the `plan` command reads it',
  properties: {
    workload: { kind: 'object', properties: workloadProperties, required: ['id', 'memoryBytes', 'layers'] },
    ...placementProperties,
  },
  required: ['workload'],
};

/**
 * POST /v1/instances: the placement request plus how to run it (`ring` built in, or `exec` a command) — the
 * body of the cluster's `PlaceInstance` command (src/protocols/events.ts) without `type`.
 */
export const createInstanceRequestSchema: Schema = {
  kind: 'object',
  description: 'place a workload and start its runners',
  properties: {
    workload: {
      kind: 'object',
      properties: {
        ...workloadProperties,
        kind: { kind: 'string', enum: ['ring', 'exec'], description: 'runner workload; default ring' },
        command: { kind: 'string', minLength: 1, maxLength: 4096, description: 'program to run (kind=exec, required there)' },
        args: { kind: 'array', items: { kind: 'string', maxLength: 4096 }, maxItems: 256, description: 'its arguments' },
        env: { kind: 'object', properties: {}, values: { kind: 'string', maxLength: 65536 }, description: 'extra environment' },
        cwd: { kind: 'string', minLength: 1, maxLength: 4096 },
        artifacts: { kind: 'array', items: { kind: 'string', minLength: 64, maxLength: 64 }, maxItems: 64, description: 'artifact ids the workload needs (docs/artifacts.md): placement prefers their holders' },
        restart: {
          kind: 'object', description: 'kind=exec: restart the whole job when a rank fails (torchrun --max-restarts)',
          properties: { policy: { kind: 'string', enum: ['never', 'on-failure'] }, max: { kind: 'integer', minimum: 0, maximum: 100 } },
          required: ['policy'],
        },
      },
      required: ['id', 'memoryBytes', 'layers'],
    },
    ...placementProperties,
    instanceId: { kind: 'string', minLength: 1, maxLength: 256, description: 'choose the id (default: the leader picks one)' },
  },
  required: ['workload'],
};

/** POST /v1/bench/ring: nccl-tests style sweep over chosen nodes (all nodes when omitted). */
export const ringBenchRequestSchema: Schema = {
  kind: 'object',
  description: 'start a ring benchmark on the live cluster',
  properties: {
    nodes: { kind: 'array', items: nodeId, minItems: 1, maxItems: 4096, description: 'node ids; default: every node' },
    ops: {
      kind: 'array',
      items: { kind: 'string', enum: ['all-reduce', 'all-gather', 'broadcast', 'send-recv'] },
      minItems: 1,
      maxItems: 4,
    },
    dtype: { kind: 'string', enum: ['float32', 'float16', 'int32'] },
    minBytes: { kind: 'integer', minimum: 1, maximum: 2 ** 34, description: 'nccl-tests -b' },
    maxBytes: { kind: 'integer', minimum: 1, maximum: 2 ** 34, description: 'nccl-tests -e' },
    stepFactor: { kind: 'integer', minimum: 2, maximum: 1024, description: 'nccl-tests -f' },
    iterations: { kind: 'integer', minimum: 1, maximum: 100_000, description: 'nccl-tests -n' },
    warmup: { kind: 'integer', minimum: 0, maximum: 100_000, description: 'nccl-tests -w' },
    bidirectional: { kind: 'boolean', description: 'use both ring directions' },
  },
};

/** POST /v1/links/measure: which of this node's links to re-measure (all when empty). */
export const measureLinksRequestSchema: Schema = {
  kind: 'object',
  description: "re-measure this node's links now; both filters optional (together: the link to that peer at that address)",
  properties: {
    peer: { kind: 'string', minLength: 1, maxLength: 256, description: 'only links to this node id' },
    ip: { kind: 'string', minLength: 2, maxLength: 64, description: "only the link at this address (one of the peer's IPs)" },
  },
};
