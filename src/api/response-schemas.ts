import { ERROR_STATUS } from '../protocols/errors.js';
import { INTERFACE_TYPES, RUNNER_STATES } from '../protocols/events.js';
import { MapOf, StringEnum, Type, type Shape, type TSchema } from '../protocols/schema-kit.js';
import { BACKENDS, SHARDINGS } from '../protocols/placement-kinds.js';

/**
 * The answers' schemas (TypeBox, src/protocols/schema-kit.ts), written to describe exactly what the views
 * (./views.ts, ./node-facade.ts) and the routes put on the wire; the OpenAPI document serves these objects as
 * they are. Every object says whether it is closed (`additionalProperties: false`, the usual case) or open on
 * purpose (passthrough data owned elsewhere: the replicated state, planner plans, ring tables).
 * test/api/openapi-live.test.ts calls every route and validates the real answers against the document under
 * strict Ajv, and fails on any object that does not say which it is.
 */
const ref = (name: string): TSchema => Type.Unsafe({ $ref: `#/components/schemas/${name}` });
const str = Type.String();
const num = Type.Number();
const int = Type.Integer();
const bool = Type.Boolean();
const opt = Type.Optional;
const CLOSED = { additionalProperties: false } as const;
/** Passthrough data another part owns; its known fields are named, others may appear. */
const open = <P extends Record<string, TSchema>>(description: string, properties: P = {} as P) =>
  Type.Object(Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)])), {
    description,
    additionalProperties: true,
  });
const epochMs = (what: string) => Type.Number({ description: `${what}, epoch milliseconds` });
const calibrationFigures = Type.Object(
  {
    gflops: num,
    memoryBandwidthGBps: num,
    layerOverheadMs: num,
    hopOverheadMs: Type.Optional(num),
    measuredAt: epochMs('when the command ended'),
  },
  { ...CLOSED, description: 'what the framework reached on the node (src/protocols/calibration.ts)' },
);

const role = StringEnum(['leader', 'follower', 'candidate', 'alone']);
/** This node's own role: also `unknown` when its cluster actor did not answer (`clusterUnavailable` says why). */
const ownRole = StringEnum(['leader', 'follower', 'candidate', 'alone', 'unknown']);
const backend = StringEnum(BACKENDS);
const sharding = StringEnum(SHARDINGS);

const errorBody = Type.Object(
  {
    code: StringEnum(Object.keys(ERROR_STATUS) as (keyof typeof ERROR_STATUS)[]),
    message: str,
    details: opt(open('where/path for validation errors; the planner reasons for refusals')),
  },
  CLOSED,
);
export type ErrorBody = Shape<typeof errorBody>;

const endpoint = Type.Object({ ip: str, port: int }, CLOSED);

const instancePlan = Type.Object(
  {
    id: str,
    backend,
    sharding,
    nodes: Type.Array(str, { description: 'rank order' }),
    shards: Type.Array(Type.Object({ node: str, rank: int, worldSize: int, startLayer: int, endLayer: int }, CLOSED)),
    port: int,
    hostsByNode: opt(MapOf(Type.Array(endpoint), { description: 'per node, the addresses its ring neighbours dial' })),
    jacclDevices: opt(
      Type.Array(Type.Array(Type.Union([Type.String(), Type.Null()])), { description: 'RDMA device matrix (jaccl)' }),
    ),
    jacclCoordinators: opt(MapOf(str)),
    meshAddresses: opt(
      MapOf(str, { description: 'per node, an address every other node reaches (MASTER_ADDR, *_SOCKET_IFNAME)' }),
    ),
  },
  { ...CLOSED, description: 'the placement the leader applied (src/protocols/instance-plan.ts)' },
);

const workloadSpec = Type.Object(
  {
    id: str,
    kind: StringEnum(['ring', 'exec']),
    memoryBytes: int,
    layers: int,
    hiddenSize: opt(int),
    kvHeads: opt(int),
    supportsTensor: opt(bool),
    logs: opt(
      Type.Object(
        { maxFiles: opt(int), maxFileBytes: opt(int) },
        {
          ...CLOSED,
          description: "how each rank's stdout and stderr rotate on its node (src/protocols/log-rotation.ts)",
        },
      ),
    ),
    bytesPerLayer: opt(int),
    activationBytesPerToken: opt(int),
    flopsPerTokenPerLayer: opt(num),
    tokensPerStep: opt(int),
    returnBytesPerStep: opt(int),
    contextTokens: opt(int),
    kvBytesPerTokenPerLayer: opt(int),
    framework: opt(str),
    model: opt(Type.String({ description: 'the model artifact each node receives its layers of (docs/artifacts.md)' })),
    artifacts: opt(
      Type.Array(str, { description: 'artifact ids the workload needs on every node (docs/artifacts.md)' }),
    ),
    restart: opt(
      Type.Object(
        { policy: StringEnum(['never', 'on-failure']), max: int },
        { ...CLOSED, description: 'what happens when the job fails (exec)' },
      ),
    ),
    command: opt(str),
    args: opt(Type.Array(str)),
    env: opt(
      MapOf(Type.Literal('[redacted]'), {
        description: 'the names of the variables set; every value is "[redacted]" (values never leave the node)',
      }),
    ),
    cwd: opt(str),
  },
  { ...CLOSED, description: 'what the instance runs (src/protocols/workload-spec.ts)' },
);

const quorum = Type.Object(
  { ok: bool, members: int, reached: int, needed: int, why: opt(str) },
  { ...CLOSED, description: 'without a quorum the node refuses writes (TORUS_NO_QUORUM)' },
);
const security = Type.Object(
  { mode: StringEnum(['secret', 'open']), secretSource: opt(str), warning: opt(str) },
  {
    ...CLOSED,
    description:
      'secret: a cluster credential guards the API and the cluster port (secretSource says where the secret came from, never its value); open: --insecure-open, anyone who reaches the node controls it',
  },
);

const topologyNode = Type.Object(
  {
    id: str,
    name: opt(str),
    incarnation: opt(int),
    version: opt(str),
    role: opt(role),
    memory: opt(Type.Object({ ramAvailable: num, ramTotal: num }, { ...CLOSED, description: 'bytes' })),
    interfaces: opt(
      Type.Array(Type.Object({ name: str, ip: str, type: StringEnum(INTERFACE_TYPES) }, CLOSED), {
        description: 'one entry per address',
      }),
    ),
    device: opt(
      Type.Object(
        {
          memoryBandwidthGBps: opt(num),
          gflops: opt(num),
          memoryBandwidthSource: opt(StringEnum(['measured', 'declared'])),
          gflopsSource: opt(StringEnum(['measured', 'declared'])),
          measuredAt: opt(num),
        },
        { ...CLOSED, description: 'memory bandwidth (GB/s) and f32 compute (GFLOP/s), measured or declared' },
      ),
    ),
    calibrations: opt(
      MapOf(calibrationFigures, {
        description: 'framework → what a calibration measured it reach on this node (POST /v1/calibrations)',
      }),
    ),
  },
  CLOSED,
);
const topologyLink = Type.Object(
  {
    source: str,
    sink: str,
    ip: str,
    type: StringEnum(INTERFACE_TYPES, { description: "the sink interface's type" }),
    rttMs: opt(num),
    bandwidthBps: opt(Type.Number({ description: 'bits per second' })),
    measuredAt: opt(epochMs('last measurement')),
  },
  { ...CLOSED, description: 'one directed edge per working address' },
);

const runner = Type.Object(
  {
    node: str,
    rank: int,
    status: StringEnum(RUNNER_STATES),
    reason: opt(str),
    restarts: opt(Type.Integer({ description: 'restart attempts so far' })),
    exitCode: opt(Type.Integer({ description: "an exec rank's command exit code" })),
    signal: opt(Type.String({ description: 'the signal that ended it' })),
  },
  CLOSED,
);

/** An exec instance is a job (src/api/views.ts). */
const job = Type.Object(
  {
    state: StringEnum(['running', 'restarting', 'completed', 'failed']),
    exitCode: opt(Type.Integer({ description: "0 when completed; the first failing rank's code" })),
    signal: opt(Type.String({ description: 'the signal that killed the first failing rank' })),
    failedRank: opt(int),
    failedNode: opt(str),
    restarts: Type.Integer({ description: 'group restarts so far (restart policy on-failure)' }),
  },
  { ...CLOSED, description: 'the job state of an exec instance' },
);

export const responseSchemas = {
  CalibrationRun: Type.Object(
    {
      framework: str,
      results: Type.Array(
        Type.Union([
          Type.Object(
            { nodeId: str, ok: Type.Literal(true), figures: calibrationFigures, wallMs: int },
            { ...CLOSED, description: 'recorded (CalibrationRecorded)' },
          ),
          Type.Object(
            { nodeId: str, ok: Type.Literal(false), reason: str },
            { ...CLOSED, description: 'nothing recorded for this node, and why' },
          ),
        ]),
      ),
    },
    { ...CLOSED, description: 'per node, the figures recorded or why none were' },
  ),
  Calibrations: Type.Object(
    {
      calibrations: MapOf(MapOf(calibrationFigures), {
        description: 'node id → framework → figures, as the replicated state holds them',
      }),
    },
    CLOSED,
  ),
  Error: Type.Object({ error: errorBody }, CLOSED),
  NodeInfo: Type.Object(
    {
      id: str,
      name: str,
      version: str,
      incarnation: int,
      uptimeMs: num,
      role: ownRole,
      leaderId: opt(str),
      cluster: opt(str),
      quorum: opt(quorum),
      clusterUnavailable: opt(
        Type.Object(
          { code: str, message: str },
          {
            ...CLOSED,
            description:
              'the cluster actor did not answer (busy past the timeout, restarting): role and quorum unknown',
          },
        ),
      ),
      security: opt(security),
    },
    CLOSED,
  ),
  StateView: Type.Object(
    {
      state: open(
        'the replicated state exactly as the topology keeper holds it (src/actors/topology-keeper/state.ts)',
        {
          lastIndex: int,
          lastTerm: int,
          nodes: MapOf(open('a node record'), { description: 'node records by id' }),
          links: Type.Array(open('a link record')),
          instances: MapOf(open('an instance record'), { description: 'instance records by id' }),
        },
      ),
      digest: str,
      lastIndex: int,
    },
    CLOSED,
  ),
  Topology: Type.Object(
    { nodes: Type.Array(topologyNode), links: Type.Array(topologyLink), lastIndex: opt(int) },
    CLOSED,
  ),
  Peer: Type.Object(
    {
      address: str,
      id: opt(str),
      nodeId: opt(str),
      reason: StringEnum(['other-cluster', 'incompatible-version', 'auth-required', 'auth-failure', 'unreachable']),
      detail: opt(str),
      via: opt(StringEnum(['static', 'mdns', 'gossip', 'inbound'])),
      at: opt(epochMs('last heard')),
      lastHeardAt: opt(epochMs('last heard (same as at)')),
      attempts: opt(Type.Integer({ description: 'refused dials in a row' })),
      nextRetryAt: opt(epochMs('next dial')),
    },
    { ...CLOSED, description: 'a node heard but not joined, and why' },
  ),
  PeerList: Type.Object({ peers: Type.Array(ref('Peer')) }, CLOSED),
  Instance: Type.Object(
    {
      id: str,
      nodes: Type.Array(str, { description: 'ring (rank) order' }),
      runners: Type.Array(runner),
      backend,
      sharding,
      status: StringEnum(['active', 'needs-replacement', 'failed', 'completed']),
      reason: opt(str),
      generation: Type.Integer({ description: '1 at creation, +1 per re-placement' }),
      pinned: opt(
        Type.Boolean({
          description: 'true: placed on the nodes the request named, in its order; never moved to other nodes',
        }),
      ),
      exitCode: opt(Type.Integer({ description: "a finished job: 0, or the first failing rank's code" })),
      job: opt(job),
      workload: workloadSpec,
      plan: instancePlan,
      artifacts: opt(
        Type.Array(
          Type.Object(
            {
              id: str,
              name: str,
              bytes: int,
              nodes: Type.Array(
                Type.Object(
                  {
                    node: str,
                    haveBytes: int,
                    complete: bool,
                    rateBps: opt(Type.Integer({ description: 'receiving at, bytes/s (while a transfer runs)' })),
                    layers: opt(
                      Type.Array(int, {
                        minItems: 2,
                        maxItems: 2,
                        description: "the workload's model: this node's pipeline stage [from, to)",
                      }),
                    ),
                    bytes: opt(
                      Type.Integer({
                        description: 'what this node needs of it (its stage), when not the whole artifact',
                      }),
                    ),
                  },
                  CLOSED,
                ),
              ),
              bound: opt(
                Type.Object(
                  {
                    seconds: Type.Number({ minimum: 0 }),
                    node: str,
                    side: StringEnum(['in', 'out']),
                    bytes: int,
                    capacityBps: num,
                  },
                  {
                    ...CLOSED,
                    description:
                      "the time no schedule beats for what the placed nodes still lack, over the measured links, and the node ('holders': the holders together) and side of it that set it (docs/artifacts.md, The bound)",
                  },
                ),
              ),
            },
            CLOSED,
          ),
          {
            description:
              "the workload's artifacts and model on the placed nodes (docs/artifacts.md); present when the workload lists any or names a model",
          },
        ),
      ),
    },
    CLOSED,
  ),
  InstanceList: Type.Object({ instances: Type.Array(ref('Instance')) }, CLOSED),
  Deleted: Type.Object({ deleted: str }, CLOSED),
  ArtifactTransfers: Type.Object(
    {
      transfers: Type.Array(
        open("one of this node's transfers (docs/artifacts.md, Transfer)", {
          id: str,
          name: str,
          state: StringEnum(['preparing', 'running', 'complete', 'failed']),
          chunks: int,
          have: int,
          bytes: int,
          haveBytes: int,
          startedAt: epochMs('started'),
          endedAt: epochMs('ended'),
          rateBps: Type.Integer({ description: 'bytes/s received so far' }),
          etaSeconds: int,
          upstream: str,
          stage: Type.Object(
            { fromLayer: int, toLayer: int },
            { ...CLOSED, description: "a model's pipeline stage: only these layers' chunks (end exclusive)" },
          ),
          sources: Type.Array(str),
          bySource: MapOf(Type.Object({ chunks: int, bytes: int }, CLOSED)),
          corrupt: MapOf(int),
          error: Type.Object({ code: str, message: str }, CLOSED),
          bound: Type.Object(
            {
              seconds: Type.Number({ minimum: 0 }),
              node: Type.String({ description: "the node whose ports set it; 'holders': the holders together" }),
              side: StringEnum(['in', 'out']),
              bytes: int,
              capacityBps: Type.Number({ description: 'bits/s: the sum over its ports of the fastest link each' }),
            },
            {
              ...CLOSED,
              description:
                'the time no schedule beats for the chunks the transfer lacked at its start, over the measured links (docs/artifacts.md, The bound)',
            },
          ),
        }),
      ),
      corruption: Type.Array(
        Type.Object({ at: epochMs('reported'), artifactId: str, nodeId: str, chunk: int }, CLOSED),
      ),
    },
    CLOSED,
  ),
  Previews: Type.Object(
    {
      previews: Type.Array(
        Type.Object(
          {
            sharding,
            backend,
            nodeCount: int,
            plan: opt(
              open("the planner's plan: instance, hops, explanation (src/actors/placement-planner/plan-result.ts)"),
            ),
            refusal: opt(
              open("the planner's reason: kind, message, explanation (src/actors/placement-planner/plan-result.ts)"),
            ),
          },
          { ...CLOSED, description: 'one option: a plan, or the refusal' },
        ),
      ),
    },
    { ...CLOSED, description: 'every sharding × backend × node count option' },
  ),
  PipelineBenchResult: Type.Object(
    {
      instanceId: str,
      nodes: Type.Array(str, { description: 'ring (rank) order' }),
      layers: Type.Array(int, { description: 'layers per rank' }),
      nextHop: Type.Array(str, { description: 'per rank, the address it dials the next rank at' }),
      predicted: open("the cost model's prediction for this plan (src/actors/placement-planner/cost-model.ts)"),
      measured: Type.Object(
        {
          stepMs: Type.Union([num, Type.Null()]),
          tokensPerS: Type.Union([num, Type.Null()]),
          activationBytes: int,
          verifiedBytes: int,
          wrong: int,
        },
        { ...CLOSED, description: "rank 0's median step through every stage and hop; activations checked bit for bit" },
      ),
      errorPercent: Type.Union([num, Type.Null()], { description: '(measured − predicted) / predicted step time, %' }),
    },
    { ...CLOSED, description: 'a pipeline benchmark: measured beside predicted' },
  ),
  BenchRun: Type.Object(
    {
      id: str,
      status: StringEnum(['running', 'done', 'failed']),
      startedAt: epochMs('start'),
      progress: opt(
        Type.Object(
          {
            done: int,
            total: int,
            message: opt(str),
            row: opt(Type.Unknown({ description: 'the latest finished row of the table (src/ring)' })),
          },
          CLOSED,
        ),
      ),
      result: opt(ref('RingBenchResult')),
      error: opt(errorBody),
    },
    CLOSED,
  ),
  BenchRunList: Type.Object({ runs: Type.Array(ref('BenchRun')) }, CLOSED),
  RingBenchResult: open('the live benchmark table (src/bench/live/ring-bench-live.ts); busbw in GB/s as nccl-tests', {
    mode: str,
    ring: Type.Array(str, { description: 'the ring order of node ids' }),
    instanceId: str,
    rows: Type.Array(open('one (op, size) row: nccl-tests columns, median, p99')),
    avgBusbw: num,
    avgBusbwLarge: Type.Union([num, Type.Null()]),
    gloo: Type.Union(
      [
        Type.Object(
          {
            ok: Type.Literal(true),
            python: str,
            torch: str,
            iface: str,
            rows: Type.Array(Type.Object({ bytes: int, timeUs: num, medianUs: num, p99Us: num, busbw: num }, CLOSED)),
          },
          CLOSED,
        ),
        Type.Object({ ok: Type.Literal(false), reason: str }, CLOSED),
      ],
      { description: "request gloo=true: torch Gloo's all_reduce on the same nodes, or why it did not run" },
    ),
    vsGloo: Type.Array(
      Type.Object({ size: int, ringBusbw: num, glooBusbw: num, ratio: Type.Union([num, Type.Null()]) }, CLOSED),
      { description: 'ring ÷ Gloo busbw per all-reduce size' },
    ),
  }),
  DeviceMeasured: Type.Object(
    {
      device: Type.Union([
        Type.Object(
          {
            memoryBandwidthGBps: opt(num),
            gflops: opt(num),
            memoryBandwidthSource: opt(StringEnum(['measured', 'declared'])),
            gflopsSource: opt(StringEnum(['measured', 'declared'])),
            measuredAt: opt(epochMs('when the CPU was measured')),
          },
          CLOSED,
        ),
        Type.Null(),
      ]),
    },
    { ...CLOSED, description: "this node's device figures after the measurement (also in its profile)" },
  ),
  MeasureLinksQueued: Type.Object(
    {
      links: Type.Array(
        Type.Object(
          {
            sink: str,
            ip: str,
            type: opt(StringEnum(INTERFACE_TYPES)),
            measuredAt: opt(epochMs('the previous measurement')),
          },
          CLOSED,
        ),
      ),
      queued: opt(
        Type.Integer({ description: 'links waiting for the next measuring pass (this request and earlier ones)' }),
      ),
    },
    CLOSED,
  ),
  MemberRemoved: Type.Object({ nodeId: str, status: Type.Literal('removed'), message: str }, CLOSED),
  MemberRemovalPending: Type.Object({ nodeId: str, status: Type.Literal('pending'), message: str }, CLOSED),
  OpenApiDocument: open('this document (OpenAPI 3.1)', { openapi: Type.Literal('3.1.0') }),
};
