/**
 * The state snapshot's shape (a new or restarted node installs one, src/actors/topology-keeper/snapshot.ts): one TypeBox
 * schema per record of the replicated state, built from the same field schemas the events use (the state is
 * the fold of those events). The record interfaces of state.ts keep their comments; each is checked equal to
 * its schema here (`sameShape`), so the two cannot drift. What a schema cannot say (record keys equal ids, links
 * sorted and between known nodes, runners of plan nodes, plan rules, holders known, the digest) is snapshot.ts's.
 */
import {
  ARTIFACT_ID_PATTERN,
  INTERFACE_TYPES,
  DeviceInfo,
  MemoryInfo,
  NetInterface,
  RUNNER_STATES,
  RunnerPolicy,
  TASK_STATUSES,
  type WorkloadSpec,
} from '../../protocols/events.js';
import {
  Amount,
  CLOSED,
  Count,
  Endpoint,
  ExitCode,
  Id,
  Ip,
  Port,
  Reason,
  Signal,
} from '../../protocols/event-fields.js';
import { ModelRecord } from '../../protocols/model-record.js';
import { ArtifactStage } from '../../protocols/artifact-events.js';
import { CalibrationFigures, FRAMEWORK_PATTERN, MAX_FRAMEWORKS_PER_NODE } from '../../protocols/calibration.js';
import { InstancePlan } from '../../protocols/instance-plan.js';
import { JsonData, sameShape, StringEnum, Type, type Shape, type TSchema } from '../../protocols/schema-kit.js';
import { WorkloadSpec as WorkloadSpecSchema } from '../../protocols/workload-spec.js';
import type {
  ArtifactHolding,
  ArtifactRecord,
  ClusterState,
  InstanceRecord,
  LinkRecord,
  NodeProfile,
  NodeRecord,
  RunnerRecord,
  TaskRecord,
} from './state.js';

export const SNAPSHOT_VERSION = 1;
const opt = Type.Optional;
/**
 * A map keyed by id, as `Type.Record` (JSON Schema `patternProperties`), not `MapOf`: TypeBox 0.34's compiled check
 * of an `additionalProperties` schema nested in another one reuses its `key` variable (`value[key]['runners'][key]`),
 * so maps inside maps (instances → runners, instances → plan.hostsByNode) must be Records. The snapshot is not in
 * the OpenAPI document, so how it renders does not matter.
 */
const Keyed = <V extends TSchema>(value: V, maxProperties: number) =>
  Type.Record(Type.String(), value, { additionalProperties: false, maxProperties });
/** Wall-clock stamps, milliseconds since the epoch. */
const Time = Amount;

export const NodeProfileSchema = Type.Object(
  {
    interfaces: Type.Array(NetInterface, { maxItems: 256 }),
    memory: MemoryInfo,
    rdmaEnabled: opt(Type.Boolean()),
    cached: opt(
      Type.Record(Type.String({ pattern: Id.pattern }), Type.Number({ minimum: 0, maximum: 1 }), {
        additionalProperties: false,
        maxProperties: 1024,
      }),
    ),
    runners: opt(RunnerPolicy),
    device: opt(DeviceInfo),
    updatedAt: opt(Time),
  },
  CLOSED,
);
export const NodeRecordSchema = Type.Object(
  {
    id: Id,
    name: Type.String({ maxLength: 256 }),
    incarnation: Count(),
    apiPort: Port,
    apiAddresses: Type.Array(Endpoint, { maxItems: 64 }),
    peerPort: opt(Port),
    version: Type.String({ maxLength: 64 }),
    joinedAt: opt(Time),
    profile: opt(NodeProfileSchema),
  },
  CLOSED,
);
export const LinkRecordSchema = Type.Object(
  {
    source: Id,
    sink: Id,
    ip: Ip,
    type: StringEnum(INTERFACE_TYPES),
    rttMs: opt(Amount),
    bandwidthBps: opt(Amount),
    measuredAt: opt(Time),
    upAt: opt(Time),
  },
  CLOSED,
);
export const RunnerRecordSchema = Type.Object(
  {
    status: StringEnum(RUNNER_STATES),
    reason: opt(Reason),
    diagnostics: opt(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 200 })),
    exitCode: opt(ExitCode),
    signal: opt(Signal),
    attempt: opt(Count()),
    since: opt(Time),
  },
  CLOSED,
);
export const InstanceRecordSchema = Type.Object(
  {
    plan: InstancePlan,
    workload: WorkloadSpecSchema,
    // The placement constraints InstanceCreated carries (a snapshot without them could not be installed).
    minNodes: opt(Count(1)),
    requiredNodes: opt(Type.Array(Id, { maxItems: 1024 })),
    objective: opt(StringEnum(['latency', 'throughput'])),
    pinned: opt(Type.Boolean()),
    status: StringEnum(['active', 'needs-replacement', 'failed', 'completed']),
    reason: opt(Reason),
    generation: Count(1),
    restarts: opt(Count()),
    exitCode: opt(ExitCode),
    signal: opt(Signal),
    failedRank: opt(Count()),
    failedNode: opt(Id),
    /** a failed job whose restart was refused: it ends failed */
    final: opt(Type.Boolean()),
    runners: Keyed(RunnerRecordSchema, 1024),
    createdAt: opt(Time),
    updatedAt: opt(Time),
  },
  CLOSED,
);
export const TaskRecordSchema = Type.Object(
  {
    id: Id,
    instanceId: Id,
    kind: Type.String({ minLength: 1, maxLength: 64 }),
    params: opt(JsonData()),
    timeoutMs: opt(Count()),
    status: StringEnum(TASK_STATUSES),
    result: opt(JsonData()),
    error: opt(Reason),
    createdAt: opt(Time),
    updatedAt: opt(Time),
  },
  CLOSED,
);
export const ArtifactHoldingSchema = Type.Object(
  { have: Count(), since: opt(Time), rateBps: opt(Count()), stage: opt(ArtifactStage) },
  CLOSED,
);
export const ArtifactRecordSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    bytes: Count(),
    chunks: Count(0, 1 << 20),
    holders: Keyed(ArtifactHoldingSchema, 65536),
    model: opt(ModelRecord),
  },
  CLOSED,
);
export const ClusterStateSchema = Type.Object(
  {
    lastIndex: Count(),
    lastTerm: Count(),
    nodes: Keyed(NodeRecordSchema, 65536),
    links: Type.Array(LinkRecordSchema, { maxItems: 1 << 20, description: 'sorted by (source, sink, ip)' }),
    instances: Keyed(InstanceRecordSchema, 65536),
    tasks: Keyed(TaskRecordSchema, 1 << 20),
    artifacts: opt(
      Type.Record(Type.String({ pattern: ARTIFACT_ID_PATTERN.source }), ArtifactRecordSchema, {
        additionalProperties: false,
        maxProperties: 1 << 20,
      }),
    ),
    calibrations: opt(
      Keyed(
        Type.Record(Type.String({ pattern: FRAMEWORK_PATTERN.source }), CalibrationFigures, {
          additionalProperties: false,
          maxProperties: MAX_FRAMEWORKS_PER_NODE,
        }),
        65536,
      ),
    ),
  },
  CLOSED,
);
export const StateSnapshotSchema = Type.Object(
  {
    version: Type.Literal(SNAPSHOT_VERSION),
    digest: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'stateDigest(state), sha256 hex' }),
    state: ClusterStateSchema,
  },
  CLOSED,
);

// The state.ts interfaces are exactly these shapes (a decoded workload has its `restart.max` default filled in).
type Decoded<S, K extends keyof S, T> = Omit<S, K> & { readonly [P in K]: T };
sameShape<Shape<typeof NodeProfileSchema>, NodeProfile>();
sameShape<Shape<typeof NodeRecordSchema>, NodeRecord>();
sameShape<Shape<typeof LinkRecordSchema>, LinkRecord>();
sameShape<Shape<typeof RunnerRecordSchema>, RunnerRecord>();
sameShape<Decoded<Shape<typeof InstanceRecordSchema>, 'workload', WorkloadSpec>, InstanceRecord>();
sameShape<Shape<typeof TaskRecordSchema>, TaskRecord>();
sameShape<Shape<typeof ArtifactHoldingSchema>, ArtifactHolding>();
sameShape<Shape<typeof ArtifactRecordSchema>, ArtifactRecord>();
sameShape<
  Decoded<Shape<typeof ClusterStateSchema>, 'instances', Readonly<Record<string, InstanceRecord>>>,
  ClusterState
>();
