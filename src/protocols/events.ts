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
import {
  arr, bool, guarded, id, int, json, num, obj, oneOf, opt, record, str, type Json,
} from '../core/topology/reader.js';
import {
  compact, decodeIp, endpoint, MAX_PORT, nodeId, optInt, optNum, reason, typeField, W,
  type Endpoint, type Fields, type InstanceId, type NodeId, type TaskId,
} from './event-fields.js';
import { decodeInstancePlan, type InstancePlan } from './instance-plan.js';
import { decodeWorkloadSpec, type WorkloadSpec } from './workload-spec.js';
import { ARTIFACT_EVENT_DECODERS, type ArtifactDropped, type ArtifactHeld } from './artifact-events.js';

export { decodeIp, type Endpoint, type InstanceId, type NodeId, type TaskId } from './event-fields.js';
export { decodeInstancePlan, type InstancePlan, type Shard } from './instance-plan.js';
export { ARTIFACT_ID_PATTERN, type ArtifactDropped, type ArtifactHeld } from './artifact-events.js';
export { decodeWorkloadSpec, type ExecWorkload, type RingWorkload, type WorkloadSpec } from './workload-spec.js';
export {
  COMMAND_TYPES, decodeCommand,
  type CancelTask, type Command, type CommandType, type CreateInstance, type DeleteInstance, type PlaceInstance, type ReplaceInstance, type SubmitTask,
} from './commands.js';

export const EVENTS_PROTOCOL_VERSION = 1;

export const INTERFACE_TYPES = ['thunderbolt', 'ethernet', 'wifi', 'maybe_ethernet', 'unknown'] as const;
export type InterfaceType = (typeof INTERFACE_TYPES)[number];

export const RUNNER_STATUSES = ['Idle', 'Connecting', 'Connected', 'Loading', 'Loaded', 'WarmingUp', 'Ready',
  'Running', 'ShuttingDown', 'Shutdown', 'Failed'] as const;
export type RunnerStatus = (typeof RUNNER_STATUSES)[number];

export const TASK_STATUSES = ['pending', 'running', 'complete', 'failed', 'cancelled', 'timed_out'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface NetInterface {
  readonly name: string;
  readonly ips: readonly string[];
  readonly type: InterfaceType;
  /** link speed the OS reports, where it does */
  readonly speedMbps?: number;
}
/** What a node lets the runner supervisor start (issue 12): advertised so placement skips nodes that would refuse. */
export interface RunnerPolicy {
  /** false: no `exec` workloads; true: any; a list: only these commands (basename or absolute path). */
  readonly allowExec: boolean | readonly string[];
  readonly maxRunners: number;
}
export interface MemoryInfo {
  readonly ramTotal: number;
  readonly ramAvailable: number;
  readonly swapTotal?: number;
  readonly swapAvailable?: number;
}

// ---- events -------------------------------------------------------------------------------------------

/** A node joined (or re-joined: same id, new incarnation ⇒ its stale links are dropped). */
export interface NodeJoined {
  readonly type: 'NodeJoined'; readonly nodeId: NodeId; readonly name: string; readonly incarnation: number;
  readonly apiPort: number; readonly apiAddresses: readonly Endpoint[]; readonly peerPort?: number; readonly version: string;
}
export interface NodeProfileUpdated {
  readonly type: 'NodeProfileUpdated'; readonly nodeId: NodeId; readonly incarnation?: number;
  readonly interfaces: readonly NetInterface[]; readonly memory: MemoryInfo; readonly rdmaEnabled?: boolean;
  /** fraction (0..1) of each workload already cached on this node */
  readonly cached?: Readonly<Record<string, number>>;
  readonly runners?: RunnerPolicy;
}
export interface NodeGone { readonly type: 'NodeGone'; readonly nodeId: NodeId; readonly reason: string }
/** `source` reached `sink` at `ip` (one of the sink's addresses); `type` is the sink interface's type. */
export interface LinkUp {
  readonly type: 'LinkUp'; readonly source: NodeId; readonly sink: NodeId; readonly ip: string;
  readonly linkType: InterfaceType; readonly sourceIncarnation?: number;
}
export interface LinkMeasured {
  readonly type: 'LinkMeasured'; readonly source: NodeId; readonly sink: NodeId; readonly ip: string;
  readonly rttMs: number; readonly bandwidthBps: number; readonly measuredAt: number; readonly sourceIncarnation?: number;
}
export interface LinkDown {
  readonly type: 'LinkDown'; readonly source: NodeId; readonly sink: NodeId; readonly ip: string;
  readonly reason: string; readonly sourceIncarnation?: number;
}
/** `minNodes` / `requiredNodes`: the placement constraints it was planned under, kept so a re-placement honours them. */
export interface InstanceCreated {
  readonly type: 'InstanceCreated'; readonly instance: InstancePlan; readonly workload: WorkloadSpec;
  readonly minNodes?: number; readonly requiredNodes?: readonly NodeId[];
}
export interface InstanceNeedsReplacement { readonly type: 'InstanceNeedsReplacement'; readonly instanceId: InstanceId; readonly reason: string }
/** A new plan for an existing instance (same id); its runner statuses restart from nothing. */
/** `restarts`: set when this re-placement restarts a failed job (its count so far, torchrun's restart count). */
export interface InstanceReplaced { readonly type: 'InstanceReplaced'; readonly instance: InstancePlan; readonly reason: string; readonly restarts?: number }
/** A job's failing rank is named (rank, node, exit code or signal) when one caused it. The first failure wins. */
export interface InstanceFailed {
  readonly type: 'InstanceFailed'; readonly instanceId: InstanceId; readonly reason: string;
  readonly rank?: number; readonly nodeId?: NodeId; readonly exitCode?: number; readonly signal?: string;
}
/** Every rank of an `exec` job exited 0 (a job's end; its runners stop). */
export interface InstanceCompleted { readonly type: 'InstanceCompleted'; readonly instanceId: InstanceId; readonly reason: string }
export interface InstanceDeleted { readonly type: 'InstanceDeleted'; readonly instanceId: InstanceId; readonly reason: string }
export interface RunnerStatusChanged {
  readonly type: 'RunnerStatusChanged'; readonly instanceId: InstanceId; readonly nodeId: NodeId; readonly status: RunnerStatus;
  readonly reason?: string; readonly diagnostics?: readonly string[]; readonly exitCode?: number; readonly signal?: string;
  readonly attempt?: number;
}
export interface TaskCreated {
  readonly type: 'TaskCreated'; readonly taskId: TaskId; readonly instanceId: InstanceId; readonly kind: string;
  readonly params?: Json; readonly timeoutMs?: number;
}
export interface TaskStatusChanged {
  readonly type: 'TaskStatusChanged'; readonly taskId: TaskId; readonly status: TaskStatus;
  readonly result?: Json; readonly error?: string;
}

/** Written by a new leader as the first entry of its term: committing it commits every earlier entry (Raft's no-op). */
export interface LeaderElected { readonly type: 'LeaderElected'; readonly nodeId: NodeId }

export type ClusterEvent =
  | LeaderElected | NodeJoined | NodeProfileUpdated | NodeGone | LinkUp | LinkMeasured | LinkDown
  | InstanceCreated | InstanceNeedsReplacement | InstanceReplaced | InstanceFailed | InstanceCompleted | InstanceDeleted
  | RunnerStatusChanged | TaskCreated | TaskStatusChanged | ArtifactHeld | ArtifactDropped;
export type ClusterEventType = ClusterEvent['type'];

/** One log entry. `at` is stamped by the leader's shell; apply only stores it. */
export interface IndexedEvent {
  readonly index: number;
  readonly term: number;
  readonly event: ClusterEvent;
  readonly at?: number;
}

export type { Json } from '../core/topology/reader.js';

// ---- decoders -----------------------------------------------------------------------------------------

export const CLUSTER_EVENT_TYPES = ['NodeJoined', 'NodeProfileUpdated', 'NodeGone', 'LinkUp', 'LinkMeasured', 'LinkDown',
  'InstanceCreated', 'InstanceNeedsReplacement', 'InstanceReplaced', 'InstanceFailed', 'InstanceCompleted', 'InstanceDeleted',
  'RunnerStatusChanged', 'TaskCreated', 'TaskStatusChanged', 'LeaderElected', 'ArtifactHeld', 'ArtifactDropped'] as const satisfies readonly ClusterEventType[];

export function decodeNetInterface(v: unknown, p: string): NetInterface {
  const o = obj(W, v, p, ['name', 'ips', 'type'], ['speedMbps']);
  return compact({
    name: str(W, o.name, `${p}.name`, { min: 1, max: 64 }), ips: arr(W, o.ips, `${p}.ips`, (x, q) => decodeIp(x, q), 64),
    type: oneOf(W, o.type, `${p}.type`, INTERFACE_TYPES), speedMbps: optNum(o.speedMbps, `${p}.speedMbps`),
  });
}

export function decodeMemoryInfo(v: unknown, p: string): MemoryInfo {
  const o = obj(W, v, p, ['ramTotal', 'ramAvailable'], ['swapTotal', 'swapAvailable']);
  return compact({
    ramTotal: int(W, o.ramTotal, `${p}.ramTotal`), ramAvailable: int(W, o.ramAvailable, `${p}.ramAvailable`),
    swapTotal: optInt(o.swapTotal, `${p}.swapTotal`), swapAvailable: optInt(o.swapAvailable, `${p}.swapAvailable`),
  });
}

export function decodeRunnerPolicy(v: unknown, p: string): RunnerPolicy {
  const o = obj(W, v, p, ['allowExec', 'maxRunners']);
  const allowExec = typeof o.allowExec === 'boolean' ? o.allowExec
    : arr(W, o.allowExec, `${p}.allowExec`, (y, q) => str(W, y, q, { min: 1, max: 1024 }), 256);
  return { allowExec, maxRunners: int(W, o.maxRunners, `${p}.maxRunners`, 1, 1_000_000) };
}

const link = (o: Fields, p: string) => ({ source: nodeId(o.source, `${p}.source`), sink: nodeId(o.sink, `${p}.sink`), ip: decodeIp(o.ip, `${p}.ip`) });
const srcInc = (o: Fields, p: string) => optInt(o.sourceIncarnation, `${p}.sourceIncarnation`);

/** One decoder per event type: [required fields, optional fields, build]. */
const EVENT_DECODERS: { readonly [K in ClusterEventType]: readonly [readonly string[], readonly string[], (o: Fields, p: string) => Extract<ClusterEvent, { type: K }>] } = {
  NodeJoined: [['nodeId', 'name', 'incarnation', 'apiPort', 'apiAddresses', 'version'], ['peerPort'], (o, p) => compact({
    type: 'NodeJoined', nodeId: nodeId(o.nodeId, `${p}.nodeId`), name: str(W, o.name, `${p}.name`, { max: 256 }),
    incarnation: int(W, o.incarnation, `${p}.incarnation`), apiPort: int(W, o.apiPort, `${p}.apiPort`, 0, MAX_PORT),
    apiAddresses: arr(W, o.apiAddresses, `${p}.apiAddresses`, endpoint, 64),
    peerPort: optInt(o.peerPort, `${p}.peerPort`), version: str(W, o.version, `${p}.version`, { max: 64 }),
  })],
  NodeProfileUpdated: [['nodeId', 'interfaces', 'memory'], ['incarnation', 'rdmaEnabled', 'cached', 'runners'], (o, p) => compact({
    type: 'NodeProfileUpdated', nodeId: nodeId(o.nodeId, `${p}.nodeId`), incarnation: optInt(o.incarnation, `${p}.incarnation`),
    interfaces: arr(W, o.interfaces, `${p}.interfaces`, decodeNetInterface, 256), memory: decodeMemoryInfo(o.memory, `${p}.memory`),
    rdmaEnabled: opt(o.rdmaEnabled, (x) => bool(W, x, `${p}.rdmaEnabled`)),
    cached: opt(o.cached, (x) => record(W, x, `${p}.cached`, (k, q) => id(W, k, q), (y, q) => num(W, y, q, 0, 1), 1024)),
    runners: opt(o.runners, (x) => decodeRunnerPolicy(x, `${p}.runners`)),
  })],
  LeaderElected: [['nodeId'], [], (o, p) => ({ type: 'LeaderElected', nodeId: nodeId(o.nodeId, `${p}.nodeId`) })],
  NodeGone: [['nodeId', 'reason'], [], (o, p) => ({ type: 'NodeGone', nodeId: nodeId(o.nodeId, `${p}.nodeId`), reason: reason(o.reason, `${p}.reason`) })],
  LinkUp: [['source', 'sink', 'ip', 'linkType'], ['sourceIncarnation'], (o, p) => compact({
    type: 'LinkUp', ...link(o, p), linkType: oneOf(W, o.linkType, `${p}.linkType`, INTERFACE_TYPES), sourceIncarnation: srcInc(o, p),
  })],
  LinkMeasured: [['source', 'sink', 'ip', 'rttMs', 'bandwidthBps', 'measuredAt'], ['sourceIncarnation'], (o, p) => compact({
    type: 'LinkMeasured', ...link(o, p), rttMs: num(W, o.rttMs, `${p}.rttMs`, 0), bandwidthBps: num(W, o.bandwidthBps, `${p}.bandwidthBps`, 0),
    measuredAt: num(W, o.measuredAt, `${p}.measuredAt`, 0), sourceIncarnation: srcInc(o, p),
  })],
  LinkDown: [['source', 'sink', 'ip', 'reason'], ['sourceIncarnation'], (o, p) => compact({
    type: 'LinkDown', ...link(o, p), reason: reason(o.reason, `${p}.reason`), sourceIncarnation: srcInc(o, p),
  })],
  InstanceCreated: [['instance', 'workload'], ['minNodes', 'requiredNodes'], (o, p) => compact({
    type: 'InstanceCreated', instance: decodeInstancePlan(o.instance, `${p}.instance`), workload: decodeWorkloadSpec(o.workload, `${p}.workload`),
    minNodes: optInt(o.minNodes, `${p}.minNodes`, 1), requiredNodes: opt(o.requiredNodes, (x) => arr(W, x, `${p}.requiredNodes`, nodeId, 1024)),
  })],
  InstanceNeedsReplacement: [['instanceId', 'reason'], [], (o, p) => ({ type: 'InstanceNeedsReplacement', instanceId: id(W, o.instanceId, `${p}.instanceId`), reason: reason(o.reason, `${p}.reason`) })],
  InstanceReplaced: [['instance', 'reason'], ['restarts'], (o, p) => compact({
    type: 'InstanceReplaced', instance: decodeInstancePlan(o.instance, `${p}.instance`), reason: reason(o.reason, `${p}.reason`), restarts: optInt(o.restarts, `${p}.restarts`),
  })],
  InstanceFailed: [['instanceId', 'reason'], ['rank', 'nodeId', 'exitCode', 'signal'], (o, p) => compact({
    type: 'InstanceFailed', instanceId: id(W, o.instanceId, `${p}.instanceId`), reason: reason(o.reason, `${p}.reason`),
    rank: optInt(o.rank, `${p}.rank`), nodeId: opt(o.nodeId, (x) => nodeId(x, `${p}.nodeId`)),
    exitCode: opt(o.exitCode, (x) => int(W, x, `${p}.exitCode`, -(2 ** 31), 2 ** 32)), signal: opt(o.signal, (x) => str(W, x, `${p}.signal`, { max: 32 })),
  })],
  InstanceCompleted: [['instanceId', 'reason'], [], (o, p) => ({ type: 'InstanceCompleted', instanceId: id(W, o.instanceId, `${p}.instanceId`), reason: reason(o.reason, `${p}.reason`) })],
  InstanceDeleted: [['instanceId', 'reason'], [], (o, p) => ({ type: 'InstanceDeleted', instanceId: id(W, o.instanceId, `${p}.instanceId`), reason: reason(o.reason, `${p}.reason`) })],
  RunnerStatusChanged: [['instanceId', 'nodeId', 'status'], ['reason', 'diagnostics', 'exitCode', 'signal', 'attempt'], (o, p) => compact({
    type: 'RunnerStatusChanged', instanceId: id(W, o.instanceId, `${p}.instanceId`), nodeId: nodeId(o.nodeId, `${p}.nodeId`),
    status: oneOf(W, o.status, `${p}.status`, RUNNER_STATUSES), reason: opt(o.reason, (x) => reason(x, `${p}.reason`)),
    diagnostics: opt(o.diagnostics, (x) => arr(W, x, `${p}.diagnostics`, (y, q) => str(W, y, q), 200)),
    exitCode: opt(o.exitCode, (x) => int(W, x, `${p}.exitCode`, -(2 ** 31), 2 ** 32)), signal: opt(o.signal, (x) => str(W, x, `${p}.signal`, { max: 32 })),
    attempt: optInt(o.attempt, `${p}.attempt`),
  })],
  TaskCreated: [['taskId', 'instanceId', 'kind'], ['params', 'timeoutMs'], (o, p) => compact({
    type: 'TaskCreated', taskId: id(W, o.taskId, `${p}.taskId`), instanceId: id(W, o.instanceId, `${p}.instanceId`),
    kind: str(W, o.kind, `${p}.kind`, { min: 1, max: 64 }), params: opt(o.params, (x) => json(W, x, `${p}.params`)),
    timeoutMs: optInt(o.timeoutMs, `${p}.timeoutMs`),
  })],
  TaskStatusChanged: [['taskId', 'status'], ['result', 'error'], (o, p) => compact({
    type: 'TaskStatusChanged', taskId: id(W, o.taskId, `${p}.taskId`), status: oneOf(W, o.status, `${p}.status`, TASK_STATUSES),
    result: opt(o.result, (x) => json(W, x, `${p}.result`)), error: opt(o.error, (x) => reason(x, `${p}.error`)),
  })],
  ...ARTIFACT_EVENT_DECODERS,
};

function decodeEventAt(v: unknown, p: string): ClusterEvent {
  const type = oneOf(W, typeField(v, p), `${p}.type`, CLUSTER_EVENT_TYPES);
  const [required, optional, build] = EVENT_DECODERS[type];
  return build(obj(W, v, p, ['type', ...required], optional), p);
}

export function decodeClusterEvent(v: unknown): ClusterEvent {
  return guarded(W, () => decodeEventAt(v, 'event'));
}

/** A log entry `{index, term, event, at?}`; `path` names it in errors (e.g. `body.entries[3]`). */
export function decodeIndexedEvent(v: unknown, path = 'indexed'): IndexedEvent {
  return guarded(W, () => {
    const o = obj(W, v, path, ['index', 'term', 'event'], ['at']);
    return compact({
      index: int(W, o.index, `${path}.index`, 1), term: int(W, o.term, `${path}.term`),
      event: decodeEventAt(o.event, `${path}.event`), at: opt(o.at, (x) => num(W, x, `${path}.at`, 0)),
    });
  });
}
