/**
 * The cluster event log: events (past tense facts, sequenced by the leader and applied in order by every
 * node's topology keeper) and commands (imperative requests sent to the leader, which turns them into events).
 * Every message has a literal `type`. `decodeClusterEvent`, `decodeIndexedEvent` and `decodeCommand` check
 * strictly (unknown fields and types are refused) and throw only `ValidationError` naming the JSON path.
 *
 * Units: memory in bytes; `rttMs` in milliseconds; `bandwidthBps` in BITS per second (as iperf3 reports);
 * wall-clock stamps (`measuredAt`, the envelope's `at`) in milliseconds since the Unix epoch.
 * Indices start at 1: an empty state has `lastIndex` 0 (raft's convention).
 */
import { isIP } from 'node:net';
import {
  arr, bool, fail, guarded, id, int, isPlainObject, json, num, obj, oneOf, opt, record, str,
  type Json, type Where,
} from '../core/topology/reader.js';

export const EVENTS_PROTOCOL_VERSION = 1;

export type NodeId = string;
export type InstanceId = string;
export type TaskId = string;

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
export interface MemoryInfo {
  readonly ramTotal: number;
  readonly ramAvailable: number;
  readonly swapTotal?: number;
  readonly swapAvailable?: number;
}
export interface Endpoint { readonly ip: string; readonly port: number }

/** The placement engineer's plan `instance` object (issue 5), verbatim. */
export interface Shard {
  readonly node: NodeId;
  readonly rank: number;
  readonly worldSize: number;
  readonly startLayer: number;
  readonly endLayer: number;
}
export interface InstancePlan {
  readonly id: InstanceId;
  readonly backend: 'ring' | 'jaccl';
  readonly sharding: 'pipeline' | 'tensor';
  /** rank order */
  readonly nodes: readonly NodeId[];
  readonly shards: readonly Shard[];
  readonly port: number;
  readonly hostsByNode?: Readonly<Record<NodeId, readonly Endpoint[]>>;
  readonly jacclDevices?: readonly (readonly (string | null)[])[];
  readonly jacclCoordinators?: Readonly<Record<NodeId, string>>;
}

interface WorkloadBase {
  readonly id: string;
  readonly memoryBytes: number;
  readonly layers: number;
  readonly hiddenSize?: number;
  readonly kvHeads?: number;
  readonly supportsTensor?: boolean;
}
export interface RingWorkload extends WorkloadBase { readonly kind: 'ring' }
export interface ExecWorkload extends WorkloadBase {
  readonly kind: 'exec';
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}
export type WorkloadSpec = RingWorkload | ExecWorkload;

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
export interface InstanceReplaced { readonly type: 'InstanceReplaced'; readonly instance: InstancePlan; readonly reason: string }
export interface InstanceFailed { readonly type: 'InstanceFailed'; readonly instanceId: InstanceId; readonly reason: string }
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

export type ClusterEvent =
  | NodeJoined | NodeProfileUpdated | NodeGone | LinkUp | LinkMeasured | LinkDown
  | InstanceCreated | InstanceNeedsReplacement | InstanceReplaced | InstanceFailed | InstanceDeleted
  | RunnerStatusChanged | TaskCreated | TaskStatusChanged;
export type ClusterEventType = ClusterEvent['type'];

/** One log entry. `at` is stamped by the leader's shell; apply only stores it. */
export interface IndexedEvent {
  readonly index: number;
  readonly term: number;
  readonly event: ClusterEvent;
  readonly at?: number;
}

// ---- commands -----------------------------------------------------------------------------------------

export interface PlaceInstance {
  readonly type: 'PlaceInstance'; readonly commandId?: string; readonly workload: WorkloadSpec;
  readonly sharding?: 'pipeline' | 'tensor'; readonly backend?: 'ring' | 'jaccl';
  readonly minNodes?: number; readonly requiredNodes?: readonly NodeId[]; readonly instanceId?: InstanceId;
}
export interface CreateInstance { readonly type: 'CreateInstance'; readonly commandId?: string; readonly instance: InstancePlan; readonly workload: WorkloadSpec }
export interface DeleteInstance { readonly type: 'DeleteInstance'; readonly commandId?: string; readonly instanceId: InstanceId; readonly reason?: string }
export interface ReplaceInstance { readonly type: 'ReplaceInstance'; readonly commandId?: string; readonly instanceId: InstanceId; readonly reason?: string }
export interface SubmitTask {
  readonly type: 'SubmitTask'; readonly commandId?: string; readonly taskId?: TaskId; readonly instanceId: InstanceId;
  readonly kind: string; readonly params?: Json; readonly timeoutMs?: number;
}
export interface CancelTask { readonly type: 'CancelTask'; readonly commandId?: string; readonly taskId: TaskId; readonly reason?: string }

export type Command = PlaceInstance | CreateInstance | DeleteInstance | ReplaceInstance | SubmitTask | CancelTask;
export type CommandType = Command['type'];

export type { Json } from '../core/topology/reader.js';

// ---- decoders -----------------------------------------------------------------------------------------

export const CLUSTER_EVENT_TYPES = ['NodeJoined', 'NodeProfileUpdated', 'NodeGone', 'LinkUp', 'LinkMeasured', 'LinkDown',
  'InstanceCreated', 'InstanceNeedsReplacement', 'InstanceReplaced', 'InstanceFailed', 'InstanceDeleted',
  'RunnerStatusChanged', 'TaskCreated', 'TaskStatusChanged'] as const satisfies readonly ClusterEventType[];
export const COMMAND_TYPES = ['PlaceInstance', 'CreateInstance', 'DeleteInstance', 'ReplaceInstance', 'SubmitTask',
  'CancelTask'] as const satisfies readonly CommandType[];

const W: Where = 'event';
const MAX_PORT = 65535;
const reason = (v: unknown, p: string): string => str(W, v, p, { max: 1024 });
const nodeId = (v: unknown, p: string): string => id(W, v, p);
const optNum = (v: unknown, p: string): number | undefined => opt(v, (x) => num(W, x, p, 0));
const optInt = (v: unknown, p: string, min = 0): number | undefined => opt(v, (x) => int(W, x, p, min));

export function decodeIp(v: unknown, path: string, where: Where = W): string {
  const ip = str(where, v, path, { max: 64 });
  if (isIP(ip) === 0) fail(where, path, 'not an IP address');
  return ip;
}
function endpoint(v: unknown, p: string): Endpoint {
  const o = obj(W, v, p, ['ip', 'port']);
  return { ip: decodeIp(o.ip, `${p}.ip`), port: int(W, o.port, `${p}.port`, 0, MAX_PORT) };
}
/** Drops absent optional fields so decoded values compare and serialise canonically. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

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

export function decodeWorkloadSpec(v: unknown, p: string): WorkloadSpec {
  const base = ['id', 'kind', 'memoryBytes', 'layers'];
  const optional = ['hiddenSize', 'kvHeads', 'supportsTensor'];
  const kind = oneOf(W, obj(W, v, p, ['kind'], [...base, ...optional, 'command', 'args', 'env', 'cwd']).kind, `${p}.kind`, ['ring', 'exec'] as const);
  const o = kind === 'ring' ? obj(W, v, p, base, optional) : obj(W, v, p, [...base, 'command'], [...optional, 'args', 'env', 'cwd']);
  const common = {
    id: id(W, o.id, `${p}.id`), memoryBytes: int(W, o.memoryBytes, `${p}.memoryBytes`), layers: int(W, o.layers, `${p}.layers`, 1),
    hiddenSize: optInt(o.hiddenSize, `${p}.hiddenSize`, 1), kvHeads: optInt(o.kvHeads, `${p}.kvHeads`, 1),
    supportsTensor: opt(o.supportsTensor, (x) => bool(W, x, `${p}.supportsTensor`)),
  };
  if (kind === 'ring') return compact({ kind, ...common });
  return compact({
    kind, ...common, command: str(W, o.command, `${p}.command`, { min: 1 }),
    args: opt(o.args, (x) => arr(W, x, `${p}.args`, (y, q) => str(W, y, q), 1024)),
    env: opt(o.env, (x) => record(W, x, `${p}.env`, (k, q) => str(W, k, q, { pattern: /^[A-Za-z_][A-Za-z0-9_]{0,255}$/ }), (y, q) => str(W, y, q, { max: 65536 }), 1024)),
    cwd: opt(o.cwd, (x) => str(W, x, `${p}.cwd`, { min: 1 })),
  });
}

function shard(v: unknown, p: string): Shard {
  const o = obj(W, v, p, ['node', 'rank', 'worldSize', 'startLayer', 'endLayer']);
  return {
    node: nodeId(o.node, `${p}.node`), rank: int(W, o.rank, `${p}.rank`), worldSize: int(W, o.worldSize, `${p}.worldSize`, 1),
    startLayer: int(W, o.startLayer, `${p}.startLayer`), endLayer: int(W, o.endLayer, `${p}.endLayer`),
  };
}

/** The plan's instance object; also checks that nodes, shards, hosts and jaccl matrices agree in rank order. */
export function decodeInstancePlan(v: unknown, p: string): InstancePlan {
  const o = obj(W, v, p, ['id', 'backend', 'sharding', 'nodes', 'shards', 'port'], ['hostsByNode', 'jacclDevices', 'jacclCoordinators']);
  const nodes = arr(W, o.nodes, `${p}.nodes`, nodeId, 1024);
  const n = nodes.length;
  if (n === 0) fail(W, `${p}.nodes`, 'empty');
  if (new Set(nodes).size !== n) fail(W, `${p}.nodes`, 'duplicate node');
  const shards = arr(W, o.shards, `${p}.shards`, shard, 1024);
  if (shards.length !== n) fail(W, `${p}.shards`, 'one shard per node expected');
  shards.forEach((s, i) => {
    if (s.worldSize !== n) fail(W, `${p}.shards[${i}].worldSize`, `must be ${n}`);
    if (nodes[s.rank] !== s.node) fail(W, `${p}.shards[${i}]`, 'node does not match nodes[rank]');
    if (s.endLayer < s.startLayer) fail(W, `${p}.shards[${i}].endLayer`, 'before startLayer');
  });
  if (new Set(shards.map((s) => s.rank)).size !== n) fail(W, `${p}.shards`, 'duplicate rank');
  const member = (k: string, q: string): string => {
    if (!nodes.includes(nodeId(k, q))) fail(W, q, 'not a node of the instance');
    return k;
  };
  const devicesRow = (x: unknown, q: string): (string | null)[] => {
    const row = arr(W, x, q, (y, r) => (y === null ? null : str(W, y, r, { min: 1, max: 64 })), n);
    if (row.length !== n) fail(W, q, `must have ${n} entries`);
    return row;
  };
  return compact({
    id: id(W, o.id, `${p}.id`), backend: oneOf(W, o.backend, `${p}.backend`, ['ring', 'jaccl'] as const),
    sharding: oneOf(W, o.sharding, `${p}.sharding`, ['pipeline', 'tensor'] as const), nodes, shards,
    port: int(W, o.port, `${p}.port`, 0, MAX_PORT),
    hostsByNode: opt(o.hostsByNode, (x) => record(W, x, `${p}.hostsByNode`, member, (y, q) => arr(W, y, q, endpoint, n), n)),
    jacclDevices: opt(o.jacclDevices, (x) => {
      const rows = arr(W, x, `${p}.jacclDevices`, devicesRow, n);
      if (rows.length !== n) fail(W, `${p}.jacclDevices`, `must have ${n} rows`);
      return rows;
    }),
    jacclCoordinators: opt(o.jacclCoordinators, (x) => record(W, x, `${p}.jacclCoordinators`, member, (y, q) => str(W, y, q, { min: 3, max: 80 }), n)),
  });
}

type Fields = Readonly<Record<string, unknown>>;
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
  NodeProfileUpdated: [['nodeId', 'interfaces', 'memory'], ['incarnation', 'rdmaEnabled', 'cached'], (o, p) => compact({
    type: 'NodeProfileUpdated', nodeId: nodeId(o.nodeId, `${p}.nodeId`), incarnation: optInt(o.incarnation, `${p}.incarnation`),
    interfaces: arr(W, o.interfaces, `${p}.interfaces`, decodeNetInterface, 256), memory: decodeMemoryInfo(o.memory, `${p}.memory`),
    rdmaEnabled: opt(o.rdmaEnabled, (x) => bool(W, x, `${p}.rdmaEnabled`)),
    cached: opt(o.cached, (x) => record(W, x, `${p}.cached`, (k, q) => id(W, k, q), (y, q) => num(W, y, q, 0, 1), 1024)),
  })],
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
  InstanceReplaced: [['instance', 'reason'], [], (o, p) => ({ type: 'InstanceReplaced', instance: decodeInstancePlan(o.instance, `${p}.instance`), reason: reason(o.reason, `${p}.reason`) })],
  InstanceFailed: [['instanceId', 'reason'], [], (o, p) => ({ type: 'InstanceFailed', instanceId: id(W, o.instanceId, `${p}.instanceId`), reason: reason(o.reason, `${p}.reason`) })],
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
};

/** The `type` of a plain object, read first so that an unknown type is reported as such. */
function typeField(v: unknown, p: string): unknown {
  return obj(W, v, p, ['type'], isPlainObject(v) ? Object.keys(v) : []).type;
}

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

const cid = (o: Fields, p: string) => opt(o.commandId, (x) => id(W, x, `${p}.commandId`));
const optReason = (o: Fields, p: string) => opt(o.reason, (x) => reason(x, `${p}.reason`));
const COMMAND_DECODERS: { readonly [K in CommandType]: readonly [readonly string[], readonly string[], (o: Fields, p: string) => Extract<Command, { type: K }>] } = {
  PlaceInstance: [['workload'], ['commandId', 'sharding', 'backend', 'minNodes', 'requiredNodes', 'instanceId'], (o, p) => compact({
    type: 'PlaceInstance', commandId: cid(o, p), workload: decodeWorkloadSpec(o.workload, `${p}.workload`),
    sharding: opt(o.sharding, (x) => oneOf(W, x, `${p}.sharding`, ['pipeline', 'tensor'] as const)),
    backend: opt(o.backend, (x) => oneOf(W, x, `${p}.backend`, ['ring', 'jaccl'] as const)),
    minNodes: optInt(o.minNodes, `${p}.minNodes`, 1), requiredNodes: opt(o.requiredNodes, (x) => arr(W, x, `${p}.requiredNodes`, nodeId, 1024)),
    instanceId: opt(o.instanceId, (x) => id(W, x, `${p}.instanceId`)),
  })],
  CreateInstance: [['instance', 'workload'], ['commandId'], (o, p) => compact({
    type: 'CreateInstance', commandId: cid(o, p), instance: decodeInstancePlan(o.instance, `${p}.instance`), workload: decodeWorkloadSpec(o.workload, `${p}.workload`),
  })],
  DeleteInstance: [['instanceId'], ['commandId', 'reason'], (o, p) => compact({ type: 'DeleteInstance', commandId: cid(o, p), instanceId: id(W, o.instanceId, `${p}.instanceId`), reason: optReason(o, p) })],
  ReplaceInstance: [['instanceId'], ['commandId', 'reason'], (o, p) => compact({ type: 'ReplaceInstance', commandId: cid(o, p), instanceId: id(W, o.instanceId, `${p}.instanceId`), reason: optReason(o, p) })],
  SubmitTask: [['instanceId', 'kind'], ['commandId', 'taskId', 'params', 'timeoutMs'], (o, p) => compact({
    type: 'SubmitTask', commandId: cid(o, p), taskId: opt(o.taskId, (x) => id(W, x, `${p}.taskId`)), instanceId: id(W, o.instanceId, `${p}.instanceId`),
    kind: str(W, o.kind, `${p}.kind`, { min: 1, max: 64 }), params: opt(o.params, (x) => json(W, x, `${p}.params`)), timeoutMs: optInt(o.timeoutMs, `${p}.timeoutMs`),
  })],
  CancelTask: [['taskId'], ['commandId', 'reason'], (o, p) => compact({ type: 'CancelTask', commandId: cid(o, p), taskId: id(W, o.taskId, `${p}.taskId`), reason: optReason(o, p) })],
};

export function decodeCommand(v: unknown): Command {
  return guarded(W, () => {
    const type = oneOf(W, typeField(v, 'command'), 'command.type', COMMAND_TYPES);
    const [required, optional, build] = COMMAND_DECODERS[type];
    return build(obj(W, v, 'command', ['type', ...required], optional), 'command');
  });
}
