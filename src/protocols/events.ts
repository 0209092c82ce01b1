/**
 * The cluster event log: events (past tense facts, sequenced by the leader and applied in order by every
 * node's topology keeper) and commands (imperative requests sent to the leader, which turns them into events;
 * they live in commands.ts and are re-exported here, as are the shared shapes, so this stays the one import).
 * Every message has a literal `type`. `decodeClusterEvent`, `decodeIndexedEvent` and `decodeCommand` check
 * strictly (unknown fields and types are refused) and throw only `ValidationError` naming the JSON path.
 *
 * Units: memory in bytes; `rttMs` in milliseconds; `bandwidthBps` in BITS per second (as iperf3 reports);
 * wall-clock stamps (`measuredAt`, the envelope's `at`) in milliseconds since the Unix epoch.
 * Indices start at 1: an empty state has `lastIndex` 0 (raft's convention).
 */
import { boundedJson } from './bounded-json.js';
import { ArtifactDropped, ArtifactHeld, checkArtifactHeld } from './artifact-events.js';
import { CalibrationRecorded } from './calibration.js';
import { Amount, CLOSED, Count, Endpoint, ExitCode, Id, Ip, Port, Reason, Signal, W } from './event-fields.js';
import { checkPlanRules, InstancePlan } from './instance-plan.js';
import { canonical, compile, JsonData, StringEnum, Type, type Shape, type TSchema } from './schema-kit.js';
import { withWorkloadDefaults, WorkloadSpec } from './workload-spec.js';

export { decodeIp, type Endpoint, type InstanceId, type NodeId, type TaskId } from './event-fields.js';
export { decodeInstancePlan, type InstancePlan, type Shard } from './instance-plan.js';
export { ARTIFACT_ID_PATTERN, type ArtifactDropped, type ArtifactHeld } from './artifact-events.js';
export type { CalibrationRecorded } from './calibration.js';
export { decodeWorkloadSpec, type ExecWorkload, type RingWorkload, type WorkloadSpec } from './workload-spec.js';
export {
  COMMAND_TYPES,
  decodeCommand,
  type CancelTask,
  type Command,
  type CommandType,
  type CreateInstance,
  type DeleteInstance,
  type PlaceInstance,
  type ReplaceInstance,
  type SubmitTask,
} from './commands.js';
export type { Json } from './schema-kit.js';

export const EVENTS_PROTOCOL_VERSION = 1;

import { INTERFACE_TYPES, type InterfaceType } from './interface-types.js';
import { RUNNER_STATES, TASK_STATUSES, type RunnerState, type TaskStatus } from './runner-status.js';

export { INTERFACE_TYPES, type InterfaceType };

/** The runner lifecycle and task states, as the events carry them: the one list, src/protocols/runner-status.ts. */
export { RUNNER_STATES };
export type RunnerStatus = RunnerState;
export { TASK_STATUSES, type TaskStatus };

const opt = Type.Optional;

export const NetInterface = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    ips: Type.Array(Ip, { maxItems: 64 }),
    type: StringEnum(INTERFACE_TYPES),
    speedMbps: opt(Type.Number({ minimum: 0, description: 'link speed the OS reports, where it does' })),
  },
  CLOSED,
);
export type NetInterface = Shape<typeof NetInterface>;

/** What a node lets the runner supervisor start: advertised so placement skips nodes that would refuse. */
export const RunnerPolicy = Type.Object(
  {
    /** false: no `exec` workloads; true: any; a list: only these commands (basename or absolute path). */
    allowExec: Type.Union(
      [Type.Boolean(), Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), { maxItems: 256 })],
      { description: 'a boolean or a list of commands' },
    ),
    maxRunners: Count(1, 1_000_000),
  },
  CLOSED,
);
export type RunnerPolicy = Shape<typeof RunnerPolicy>;

export const MemoryInfo = Type.Object(
  { ramTotal: Count(), ramAvailable: Count(), swapTotal: opt(Count()), swapAvailable: opt(Count()) },
  CLOSED,
);
export type MemoryInfo = Shape<typeof MemoryInfo>;

const FigureSource = StringEnum(['measured', 'declared']);
/**
 * What the node can do: streaming memory-read bandwidth (GB/s, 10^9 bytes/s) and f32 compute (GFLOP/s), each
 * measured at start on the CPU or declared by flags for an accelerator torus cannot measure from Node.
 */
export const DeviceInfo = Type.Object(
  {
    memoryBandwidthGBps: opt(Type.Number({ exclusiveMinimum: 0, maximum: 1e6 })),
    gflops: opt(Type.Number({ exclusiveMinimum: 0, maximum: 1e9 })),
    memoryBandwidthSource: opt(FigureSource),
    gflopsSource: opt(FigureSource),
    measuredAt: opt(Amount),
  },
  CLOSED,
);
export type DeviceInfo = Shape<typeof DeviceInfo>;

// ---- events -------------------------------------------------------------------------------------------

const event = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P) =>
  Type.Object({ type: Type.Literal(type), ...properties }, CLOSED);
const link = { source: Id, sink: Id, ip: Ip };
const sourceIncarnation = opt(Count());

/** A node joined (or re-joined: same id, new incarnation ⇒ its stale links are dropped). */
export const NodeJoined = event('NodeJoined', {
  nodeId: Id,
  name: Type.String({ maxLength: 256 }),
  incarnation: Count(),
  apiPort: Port,
  apiAddresses: Type.Array(Endpoint, { maxItems: 64 }),
  peerPort: opt(Count()),
  version: Type.String({ maxLength: 64 }),
});
export const NodeProfileUpdated = event('NodeProfileUpdated', {
  nodeId: Id,
  incarnation: opt(Count()),
  interfaces: Type.Array(NetInterface, { maxItems: 256 }),
  memory: MemoryInfo,
  rdmaEnabled: opt(Type.Boolean()),
  /** fraction (0..1) of each workload already cached on this node */
  cached: opt(
    Type.Record(Type.String({ pattern: Id.pattern }), Type.Number({ minimum: 0, maximum: 1 }), {
      additionalProperties: false,
      maxProperties: 1024,
    }),
  ),
  runners: opt(RunnerPolicy),
  device: opt(DeviceInfo),
});
export const NodeGone = event('NodeGone', { nodeId: Id, reason: Reason });
/** `source` reached `sink` at `ip` (one of the sink's addresses); `type` is the sink interface's type. */
export const LinkUp = event('LinkUp', { ...link, linkType: StringEnum(INTERFACE_TYPES), sourceIncarnation });
export const LinkMeasured = event('LinkMeasured', {
  ...link,
  rttMs: Amount,
  bandwidthBps: Amount,
  measuredAt: Amount,
  sourceIncarnation,
});
export const LinkDown = event('LinkDown', { ...link, reason: Reason, sourceIncarnation });
/**
 * `minNodes` / `requiredNodes` / `objective`: what it was planned under, kept so a re-placement plans the same way.
 * `pinned`: the request named the set and its order (the plan's `nodes`); it is never re-placed on other nodes.
 */
export const InstanceCreated = event('InstanceCreated', {
  instance: InstancePlan,
  workload: WorkloadSpec,
  minNodes: opt(Count(1)),
  requiredNodes: opt(Type.Array(Id, { maxItems: 1024 })),
  objective: opt(StringEnum(['latency', 'throughput'])),
  pinned: opt(Type.Boolean()),
});
export const InstanceNeedsReplacement = event('InstanceNeedsReplacement', { instanceId: Id, reason: Reason });
/** A new plan for an existing instance (same id); its runner statuses restart from nothing. `restarts`: set when
 * this re-placement restarts a failed job (its count so far, torchrun's restart count). */
export const InstanceReplaced = event('InstanceReplaced', {
  instance: InstancePlan,
  reason: Reason,
  restarts: opt(Count()),
});
/** A job's failing rank is named (rank, node, exit code or signal) when one caused it. The first failure wins.
 * `final`: no restart will follow (a restartable job's re-placement was refused): the job ends `failed` with this reason. */
export const InstanceFailed = event('InstanceFailed', {
  instanceId: Id,
  reason: Reason,
  rank: opt(Count()),
  nodeId: opt(Id),
  exitCode: opt(ExitCode),
  signal: opt(Signal),
  final: opt(
    Type.Boolean({ description: 'no restart will follow: the re-placement of a restartable job was refused' }),
  ),
});
/** Every rank of an `exec` job exited 0 (a job's end; its runners stop). */
export const InstanceCompleted = event('InstanceCompleted', { instanceId: Id, reason: Reason });
export const InstanceDeleted = event('InstanceDeleted', { instanceId: Id, reason: Reason });
export const RunnerStatusChanged = event('RunnerStatusChanged', {
  instanceId: Id,
  nodeId: Id,
  status: StringEnum(RUNNER_STATES),
  reason: opt(Reason),
  diagnostics: opt(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 200 })),
  exitCode: opt(ExitCode),
  signal: opt(Signal),
  attempt: opt(Count()),
});
export const TaskCreated = event('TaskCreated', {
  taskId: Id,
  instanceId: Id,
  kind: Type.String({ minLength: 1, maxLength: 64 }),
  params: opt(JsonData()),
  timeoutMs: opt(Count()),
});
export const TaskStatusChanged = event('TaskStatusChanged', {
  taskId: Id,
  status: StringEnum(TASK_STATUSES),
  result: opt(JsonData()),
  error: opt(Reason),
});
/** Written by a new leader as the first entry of its term: committing it commits every earlier entry (Raft's no-op). */
export const LeaderElected = event('LeaderElected', { nodeId: Id });

/** Every event schema by its `type`: the union, the list of types and the round-trip tests all come from here. */
export const EventSchemas = {
  LeaderElected,
  NodeJoined,
  NodeProfileUpdated,
  NodeGone,
  LinkUp,
  LinkMeasured,
  LinkDown,
  InstanceCreated,
  InstanceNeedsReplacement,
  InstanceReplaced,
  InstanceFailed,
  InstanceCompleted,
  InstanceDeleted,
  RunnerStatusChanged,
  TaskCreated,
  TaskStatusChanged,
  ArtifactHeld,
  ArtifactDropped,
  CalibrationRecorded,
};
export const ClusterEvent = Type.Union(Object.values(EventSchemas) as TSchema[] as [TSchema]);

type EventOf<K extends keyof typeof EventSchemas> = Shape<(typeof EventSchemas)[K]>;
export type NodeJoined = EventOf<'NodeJoined'>;
export type NodeProfileUpdated = EventOf<'NodeProfileUpdated'>;
export type NodeGone = EventOf<'NodeGone'>;
export type LinkUp = EventOf<'LinkUp'>;
export type LinkMeasured = EventOf<'LinkMeasured'>;
export type LinkDown = EventOf<'LinkDown'>;
export type InstanceCreated = Omit<EventOf<'InstanceCreated'>, 'workload'> & { readonly workload: WorkloadSpec };
export type InstanceNeedsReplacement = EventOf<'InstanceNeedsReplacement'>;
export type InstanceReplaced = EventOf<'InstanceReplaced'>;
export type InstanceFailed = EventOf<'InstanceFailed'>;
export type InstanceCompleted = EventOf<'InstanceCompleted'>;
export type InstanceDeleted = EventOf<'InstanceDeleted'>;
export type RunnerStatusChanged = EventOf<'RunnerStatusChanged'>;
export type TaskCreated = EventOf<'TaskCreated'>;
export type TaskStatusChanged = EventOf<'TaskStatusChanged'>;
export type LeaderElected = EventOf<'LeaderElected'>;

export type ClusterEvent =
  | LeaderElected
  | NodeJoined
  | NodeProfileUpdated
  | NodeGone
  | LinkUp
  | LinkMeasured
  | LinkDown
  | InstanceCreated
  | InstanceNeedsReplacement
  | InstanceReplaced
  | InstanceFailed
  | InstanceCompleted
  | InstanceDeleted
  | RunnerStatusChanged
  | TaskCreated
  | TaskStatusChanged
  | ArtifactHeld
  | ArtifactDropped
  | CalibrationRecorded;
export type ClusterEventType = ClusterEvent['type'];

/** One log entry. `at` is stamped by the leader's shell; apply only stores it. */
export const IndexedEvent = Type.Object(
  { index: Count(1), term: Count(), event: ClusterEvent, at: opt(Amount) },
  CLOSED,
);
export interface IndexedEvent {
  readonly index: number;
  readonly term: number;
  readonly event: ClusterEvent;
  readonly at?: number;
}

// ---- decoders -----------------------------------------------------------------------------------------

export const CLUSTER_EVENT_TYPES = Object.keys(EventSchemas) as (keyof typeof EventSchemas)[];

const netInterfaceCodec = compile(NetInterface, W);
const memoryCodec = compile(MemoryInfo, W);
const runnerPolicyCodec = compile(RunnerPolicy, W);
export const decodeNetInterface = (v: unknown, p: string): NetInterface =>
  canonical(netInterfaceCodec.decode(v, p), W, p);
export const decodeMemoryInfo = (v: unknown, p: string): MemoryInfo => canonical(memoryCodec.decode(v, p), W, p);
export const decodeRunnerPolicy = (v: unknown, p: string): RunnerPolicy =>
  canonical(runnerPolicyCodec.decode(v, p), W, p);

/** What the schemas cannot say, per event type: plan rules, workload defaults, JSON bounds, chunk counts. */
function afterCheck(e: Shape<typeof ClusterEvent> & ClusterEvent, p: string): ClusterEvent {
  switch (e.type) {
    case 'InstanceCreated':
      return {
        ...e,
        instance: checkPlanRules(e.instance, `${p}.instance`),
        workload: withWorkloadDefaults(e.workload),
      };
    case 'InstanceReplaced':
      return { ...e, instance: checkPlanRules(e.instance, `${p}.instance`) };
    case 'TaskCreated':
      return e.params === undefined ? e : { ...e, params: boundedJson(W, e.params, `${p}.params`) };
    case 'TaskStatusChanged':
      return e.result === undefined ? e : { ...e, result: boundedJson(W, e.result, `${p}.result`) };
    case 'ArtifactHeld':
      return checkArtifactHeld(e, p);
    default:
      return e;
  }
}

const eventCodec = compile(ClusterEvent, W, 'event');
const indexedCodec = compile(IndexedEvent, W, 'indexed');

export function decodeClusterEvent(v: unknown): ClusterEvent {
  return finishClusterEvent(eventCodec.decode(v), 'event');
}

/** A log entry `{index, term, event, at?}`; `path` names it in errors (e.g. `body.entries[3]`). */
export function decodeIndexedEvent(v: unknown, path = 'indexed'): IndexedEvent {
  return finishIndexedEvent(indexedCodec.decode(v, path), path);
}

/**
 * For an event a larger schema already checked (an actor's message embeds `ClusterEvent` / `IndexedEvent`): the
 * canonical copy and the rules after the check, without checking the schema a second time.
 */
export function finishClusterEvent(checked: Shape<typeof ClusterEvent>, path: string): ClusterEvent {
  return afterCheck(canonical(checked, W, path) as ClusterEvent, path);
}
export function finishIndexedEvent(checked: Shape<typeof IndexedEvent>, path: string): IndexedEvent {
  const entry = canonical(checked, W, path) as IndexedEvent;
  return { ...entry, event: afterCheck(entry.event, `${path}.event`) };
}
