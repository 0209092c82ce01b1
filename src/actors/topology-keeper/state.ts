/**
 * The replicated cluster state (docs/state.md): nodes with profiles, a directed multigraph of links (one edge per
 * (source, sink, ip)), instances with their runner statuses, and tasks. It is plain JSON data, readonly, and
 * only ever replaced by `applyEvent`; the same events in the same order give byte-identical state everywhere.
 * Records are keyed by id; read them with `own()` (ids such as "constructor" must not hit Object.prototype).
 */
import type {
  Endpoint,
  InstanceId,
  InstancePlan,
  InterfaceType,
  Json,
  DeviceInfo,
  MemoryInfo,
  NetInterface,
  NodeId,
  RunnerPolicy,
  RunnerStatus,
  TaskId,
  TaskStatus,
  WorkloadSpec,
} from '../../protocols/events.js';
import type { Link } from '../../protocols/link.js';
import type { ModelRecord } from '../../protocols/model-record.js';
import type { ArtifactStage } from '../../protocols/artifact-events.js';
import type { CalibrationFigures } from '../../protocols/calibration.js';

export interface NodeProfile {
  readonly interfaces: readonly NetInterface[];
  readonly memory: MemoryInfo;
  readonly rdmaEnabled?: boolean;
  readonly cached?: Readonly<Record<string, number>>;
  /** exec policy and runner quota the node advertises; absent: an older node, exec refused */
  readonly runners?: RunnerPolicy;
  /** memory bandwidth and compute, measured or declared (absent: an older node, or not measured yet) */
  readonly device?: DeviceInfo;
  readonly updatedAt?: number;
}

export interface NodeRecord {
  readonly id: NodeId;
  readonly name: string;
  readonly incarnation: number;
  readonly apiPort: number;
  readonly apiAddresses: readonly Endpoint[];
  readonly peerPort?: number;
  readonly version: string;
  readonly joinedAt?: number;
  readonly profile?: NodeProfile;
}

/** `source` reached `sink` at `ip` (an address of the sink); `type` is the sink interface's type. */
/** An edge of the state's multigraph: the one link type (protocols/link.ts), typed, with when it came up. */
export interface LinkRecord extends Link {
  readonly type: InterfaceType;
  readonly upAt?: number;
}

export interface RunnerRecord {
  readonly status: RunnerStatus;
  readonly reason?: string;
  readonly diagnostics?: readonly string[];
  readonly exitCode?: number;
  readonly signal?: string;
  readonly attempt?: number;
  readonly since?: number;
}

/** `completed`: every rank of an exec job exited 0. `failed` and `completed` are final (a job restart re-places). */
export type InstanceStatus = 'active' | 'needs-replacement' | 'failed' | 'completed';

export interface InstanceRecord {
  readonly plan: InstancePlan;
  readonly workload: WorkloadSpec;
  /** Placement constraints from the request, honoured again on re-placement. */
  readonly minNodes?: number;
  readonly requiredNodes?: readonly NodeId[];
  /** What the predicted choice optimised (absent: latency, the default). */
  readonly objective?: 'latency' | 'throughput';
  /** The request pinned the set and its ring order (the plan's nodes): re-placed only there, never moved. */
  readonly pinned?: boolean;
  readonly status: InstanceStatus;
  readonly reason?: string;
  /** 1 at creation, +1 per re-placement */
  readonly generation: number;
  /** A job's group restarts so far (restart policy on-failure). */
  readonly restarts?: number;
  /** A finished job: 0 when completed; the failing rank's code (or signal) when failed. */
  readonly exitCode?: number;
  readonly signal?: string;
  readonly failedRank?: number;
  readonly failedNode?: NodeId;
  /** A failed job that will not restart although its policy had restarts left: its re-placement was refused. */
  readonly final?: boolean;
  readonly runners: Readonly<Record<NodeId, RunnerRecord>>;
  readonly createdAt?: number;
  readonly updatedAt?: number;
}

export interface TaskRecord {
  readonly id: TaskId;
  readonly instanceId: InstanceId;
  readonly kind: string;
  readonly params?: Json;
  readonly timeoutMs?: number;
  readonly status: TaskStatus;
  readonly result?: Json;
  readonly error?: string;
  readonly createdAt?: number;
  readonly updatedAt?: number;
}

/** Who holds an artifact: `have` verified chunks of `chunks` (complete when equal). */
export interface ArtifactHolding {
  readonly have: number;
  readonly since?: number;
  /** bytes per second the holder was receiving it at its last report (only while a transfer runs) */
  readonly rateBps?: number;
  /** a model artifact held for a pipeline stage: its layers and that stage's chunks held (docs/artifacts.md) */
  readonly stage?: ArtifactStage;
}
export interface ArtifactRecord {
  readonly name: string;
  readonly bytes: number;
  readonly chunks: number;
  /** a model artifact: its architecture, sizes and tensors (the first record a holder sent; docs/artifacts.md) */
  readonly model?: ModelRecord;
  readonly holders: Readonly<Record<NodeId, ArtifactHolding>>;
}

export interface ClusterState {
  /** index of the last applied event; 0 when nothing has been applied (indices start at 1) */
  readonly lastIndex: number;
  /** leader term of the last applied event */
  readonly lastTerm: number;
  readonly nodes: Readonly<Record<NodeId, NodeRecord>>;
  /** sorted by (source, sink, ip) so the array is canonical */
  readonly links: readonly LinkRecord[];
  readonly instances: Readonly<Record<InstanceId, InstanceRecord>>;
  readonly tasks: Readonly<Record<TaskId, TaskRecord>>;
  /** artifact id → holdings; absent while no node holds an artifact */
  readonly artifacts?: Readonly<Record<string, ArtifactRecord>>;
  /** node id → framework → calibrated figures (docs/placement.md); absent while no node has any */
  readonly calibrations?: Readonly<Record<NodeId, NodeCalibrations>>;
}

/** A node's calibrated figures by framework name. */
export type NodeCalibrations = Readonly<Record<string, CalibrationFigures>>;

export const emptyState: ClusterState = Object.freeze({
  lastIndex: 0,
  lastTerm: 0,
  nodes: {},
  links: [],
  instances: {},
  tasks: {},
});

/** An own entry of a record, never an inherited one. */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** A copy of `record` with `key` set (computed keys define own properties, even for "__proto__"). */
export function withEntry<T>(record: Readonly<Record<string, T>>, key: string, value: T): Readonly<Record<string, T>> {
  return { ...record, [key]: value };
}

export function withoutEntry<T>(record: Readonly<Record<string, T>>, key: string): Readonly<Record<string, T>> {
  if (!Object.hasOwn(record, key)) return record;
  const { [key]: _dropped, ...rest } = record;
  return rest;
}

/** Drops `undefined` fields so records serialise canonically. */
export function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function compareLinks(a: LinkRecord, b: { source: string; sink: string; ip: string }): number {
  return cmp(a.source, b.source) || cmp(a.sink, b.sink) || cmp(a.ip, b.ip);
}

/** Code-unit order, independent of locale. */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
