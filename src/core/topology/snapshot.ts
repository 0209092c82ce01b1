/**
 * Whole-state snapshots for catch-up (a new or restarted node installs one, then applies the log's tail).
 * `decodeSnapshot` re-validates every field and the state's invariants and checks the digest, so a corrupt or
 * hostile snapshot is refused with a ValidationError instead of poisoning the replica.
 * (It reuses the event decoders for the shapes events carry: the snapshot is the fold of those events.)
 */
import {
  decodeInstancePlan, decodeIp, decodeMemoryInfo, decodeNetInterface, decodeRunnerPolicy, decodeWorkloadSpec,
  ARTIFACT_ID_PATTERN, INTERFACE_TYPES, RUNNER_STATUSES, TASK_STATUSES,
} from '../../protocols/events.js';
import { arr, bool, fail, guarded, id, int, json, num, obj, oneOf, opt, record, str, type Where } from './reader.js';
import { compact, compareLinks, type ArtifactRecord, type ClusterState, type InstanceRecord, type LinkRecord, type NodeRecord, type RunnerRecord, type TaskRecord } from './state.js';
import { stateDigest } from './digest.js';

export const SNAPSHOT_VERSION = 1;

export interface StateSnapshot {
  readonly version: typeof SNAPSHOT_VERSION;
  readonly digest: string;
  readonly state: ClusterState;
}

export function encodeSnapshot(state: ClusterState): StateSnapshot {
  return { version: SNAPSHOT_VERSION, digest: stateDigest(state), state };
}

const W: Where = 'event';
const optTime = (v: unknown, p: string) => opt(v, (x) => num(W, x, p, 0));
const text = (v: unknown, p: string) => str(W, v, p, { max: 1024 });
const endpoint = (v: unknown, p: string) => {
  const o = obj(W, v, p, ['ip', 'port']);
  return { ip: decodeIp(o.ip, `${p}.ip`), port: int(W, o.port, `${p}.port`, 0, 65535) };
};

function node(v: unknown, p: string): NodeRecord {
  const o = obj(W, v, p, ['id', 'name', 'incarnation', 'apiPort', 'apiAddresses', 'version'], ['peerPort', 'joinedAt', 'profile']);
  return compact({
    id: id(W, o.id, `${p}.id`), name: str(W, o.name, `${p}.name`, { max: 256 }), incarnation: int(W, o.incarnation, `${p}.incarnation`),
    apiPort: int(W, o.apiPort, `${p}.apiPort`, 0, 65535), apiAddresses: arr(W, o.apiAddresses, `${p}.apiAddresses`, endpoint, 64),
    peerPort: opt(o.peerPort, (x) => int(W, x, `${p}.peerPort`, 0, 65535)), version: str(W, o.version, `${p}.version`, { max: 64 }),
    joinedAt: optTime(o.joinedAt, `${p}.joinedAt`),
    profile: opt(o.profile, (x) => {
      const q = obj(W, x, `${p}.profile`, ['interfaces', 'memory'], ['rdmaEnabled', 'cached', 'runners', 'updatedAt']);
      return compact({
        interfaces: arr(W, q.interfaces, `${p}.profile.interfaces`, decodeNetInterface, 256), memory: decodeMemoryInfo(q.memory, `${p}.profile.memory`),
        rdmaEnabled: opt(q.rdmaEnabled, (y) => bool(W, y, `${p}.profile.rdmaEnabled`)),
        cached: opt(q.cached, (y) => record(W, y, `${p}.profile.cached`, (k, r) => id(W, k, r), (z, r) => num(W, z, r, 0, 1), 1024)),
        runners: opt(q.runners, (y) => decodeRunnerPolicy(y, `${p}.profile.runners`)),
        updatedAt: optTime(q.updatedAt, `${p}.profile.updatedAt`),
      });
    }),
  });
}

function link(v: unknown, p: string): LinkRecord {
  const o = obj(W, v, p, ['source', 'sink', 'ip', 'type'], ['rttMs', 'bandwidthBps', 'measuredAt', 'upAt']);
  return compact({
    source: id(W, o.source, `${p}.source`), sink: id(W, o.sink, `${p}.sink`), ip: decodeIp(o.ip, `${p}.ip`),
    type: oneOf(W, o.type, `${p}.type`, INTERFACE_TYPES), rttMs: opt(o.rttMs, (x) => num(W, x, `${p}.rttMs`, 0)),
    bandwidthBps: opt(o.bandwidthBps, (x) => num(W, x, `${p}.bandwidthBps`, 0)), measuredAt: optTime(o.measuredAt, `${p}.measuredAt`),
    upAt: optTime(o.upAt, `${p}.upAt`),
  });
}

function runner(v: unknown, p: string): RunnerRecord {
  const o = obj(W, v, p, ['status'], ['reason', 'diagnostics', 'exitCode', 'signal', 'attempt', 'since']);
  return compact({
    status: oneOf(W, o.status, `${p}.status`, RUNNER_STATUSES), reason: opt(o.reason, (x) => text(x, `${p}.reason`)),
    diagnostics: opt(o.diagnostics, (x) => arr(W, x, `${p}.diagnostics`, (y, q) => str(W, y, q), 200)),
    exitCode: opt(o.exitCode, (x) => int(W, x, `${p}.exitCode`, -(2 ** 31), 2 ** 32)), signal: opt(o.signal, (x) => str(W, x, `${p}.signal`, { max: 32 })),
    attempt: opt(o.attempt, (x) => int(W, x, `${p}.attempt`)), since: optTime(o.since, `${p}.since`),
  });
}

function instance(v: unknown, p: string): InstanceRecord {
  const o = obj(W, v, p, ['plan', 'workload', 'status', 'generation', 'runners'], ['reason', 'createdAt', 'updatedAt', 'minNodes', 'requiredNodes',
    'restarts', 'exitCode', 'signal', 'failedRank', 'failedNode', 'final']);
  const plan = decodeInstancePlan(o.plan, `${p}.plan`);
  const member = (k: string, q: string) => (plan.nodes.includes(k) ? k : fail(W, q, 'runner of a node outside the plan'));
  return compact({
    plan, workload: decodeWorkloadSpec(o.workload, `${p}.workload`),
    // The placement constraints InstanceCreated carries (a snapshot without them could not be installed).
    minNodes: opt(o.minNodes, (x) => int(W, x, `${p}.minNodes`, 1)),
    requiredNodes: opt(o.requiredNodes, (x) => arr(W, x, `${p}.requiredNodes`, (y, q) => id(W, y, q), 1024)),
    status: oneOf(W, o.status, `${p}.status`, ['active', 'needs-replacement', 'failed', 'completed'] as const),
    restarts: opt(o.restarts, (x) => int(W, x, `${p}.restarts`)), exitCode: opt(o.exitCode, (x) => int(W, x, `${p}.exitCode`, -(2 ** 31), 2 ** 32)),
    signal: opt(o.signal, (x) => str(W, x, `${p}.signal`, { max: 32 })), failedRank: opt(o.failedRank, (x) => int(W, x, `${p}.failedRank`)),
    failedNode: opt(o.failedNode, (x) => id(W, x, `${p}.failedNode`)), final: opt(o.final, (x) => bool(W, x, `${p}.final`)), reason: opt(o.reason, (x) => text(x, `${p}.reason`)),
    generation: int(W, o.generation, `${p}.generation`, 1), runners: record(W, o.runners, `${p}.runners`, member, runner),
    createdAt: optTime(o.createdAt, `${p}.createdAt`), updatedAt: optTime(o.updatedAt, `${p}.updatedAt`),
  });
}

function task(v: unknown, p: string): TaskRecord {
  const o = obj(W, v, p, ['id', 'instanceId', 'kind', 'status'], ['params', 'timeoutMs', 'result', 'error', 'createdAt', 'updatedAt']);
  return compact({
    id: id(W, o.id, `${p}.id`), instanceId: id(W, o.instanceId, `${p}.instanceId`), kind: str(W, o.kind, `${p}.kind`, { min: 1, max: 64 }),
    params: opt(o.params, (x) => json(W, x, `${p}.params`)), timeoutMs: opt(o.timeoutMs, (x) => int(W, x, `${p}.timeoutMs`)),
    status: oneOf(W, o.status, `${p}.status`, TASK_STATUSES), result: opt(o.result, (x) => json(W, x, `${p}.result`)),
    error: opt(o.error, (x) => text(x, `${p}.error`)), createdAt: optTime(o.createdAt, `${p}.createdAt`), updatedAt: optTime(o.updatedAt, `${p}.updatedAt`),
  });
}

function artifact(v: unknown, p: string, nodes: Readonly<Record<string, NodeRecord>>): ArtifactRecord {
  const o = obj(W, v, p, ['name', 'bytes', 'chunks', 'holders']);
  const chunks = int(W, o.chunks, `${p}.chunks`, 0, 1 << 20);
  const holder = (k: string, q: string) => (Object.hasOwn(nodes, k) ? k : fail(W, q, 'holder is not a known node'));
  const holders = record(W, o.holders, `${p}.holders`, holder, (y, q) => {
    const h = obj(W, y, q, ['have'], ['since', 'rateBps']);
    return compact({ have: int(W, h.have, `${q}.have`, 0, chunks), since: optTime(h.since, `${q}.since`), rateBps: opt(h.rateBps, (x) => int(W, x, `${q}.rateBps`)) });
  }, 65536);
  if (Object.keys(holders).length === 0) fail(W, `${p}.holders`, 'an artifact without holders is removed');
  return { name: str(W, o.name, `${p}.name`, { min: 1, max: 256 }), bytes: int(W, o.bytes, `${p}.bytes`), chunks, holders };
}

/** Validates a state: fields, and the invariants apply maintains (record keys = ids, links sorted, unique, between known nodes). */
export function decodeState(v: unknown, p = 'state'): ClusterState {
  const o = obj(W, v, p, ['lastIndex', 'lastTerm', 'nodes', 'links', 'instances', 'tasks'], ['artifacts']);
  const same = <T>(key: (x: T) => string) => (r: Record<string, T>, q: string) => {
    for (const [k, x] of Object.entries(r)) if (key(x) !== k) fail(W, `${q}.${k}`, 'key does not match the id');
    return r;
  };
  const nodes = same<NodeRecord>((n) => n.id)(record(W, o.nodes, `${p}.nodes`, (k) => k, node, 65536), `${p}.nodes`);
  const links = arr(W, o.links, `${p}.links`, link, 1 << 20);
  links.forEach((l, i) => {
    if (!Object.hasOwn(nodes, l.source) || !Object.hasOwn(nodes, l.sink) || l.source === l.sink) fail(W, `${p}.links[${i}]`, 'not between two known nodes');
    if (i > 0 && compareLinks(links[i - 1]!, l) >= 0) fail(W, `${p}.links[${i}]`, 'links not sorted or duplicated');
  });
  const instances = record(W, o.instances, `${p}.instances`, (k) => k, instance, 65536);
  same<InstanceRecord>((x) => x.plan.id)(instances, `${p}.instances`);
  const tasks = same<TaskRecord>((x) => x.id)(record(W, o.tasks, `${p}.tasks`, (k) => k, task, 1 << 20), `${p}.tasks`);
  for (const [k, x] of Object.entries(tasks)) if (!Object.hasOwn(instances, x.instanceId)) fail(W, `${p}.tasks.${k}.instanceId`, 'unknown instance');
  const artifacts = opt(o.artifacts, (x) => record(W, x, `${p}.artifacts`, (k, q) => str(W, k, q, { pattern: ARTIFACT_ID_PATTERN }), (y, q) => artifact(y, q, nodes), 1 << 20));
  if (artifacts && Object.keys(artifacts).length === 0) fail(W, `${p}.artifacts`, 'empty (absent when no node holds an artifact)');
  return compact({ lastIndex: int(W, o.lastIndex, `${p}.lastIndex`), lastTerm: int(W, o.lastTerm, `${p}.lastTerm`), nodes, links, instances, tasks, artifacts });
}

export function decodeSnapshot(v: unknown): StateSnapshot {
  return guarded(W, () => {
    const o = obj(W, v, 'snapshot', ['version', 'digest', 'state']);
    if (o.version !== SNAPSHOT_VERSION) fail(W, 'snapshot.version', `expected ${SNAPSHOT_VERSION}`);
    const digest = str(W, o.digest, 'snapshot.digest', { pattern: /^[0-9a-f]{64}$/ });
    const state = decodeState(o.state, 'snapshot.state');
    if (stateDigest(state) !== digest) fail(W, 'snapshot.digest', 'does not match the state');
    return { version: SNAPSHOT_VERSION, digest, state };
  });
}
