/**
 * The supervisor's record of one runner of this node (one per instance assigned here), and the start
 * configuration of its process: placement → RunnerStartConfig (env from execEnv, MLX hostfile entries).
 */
import type { CommandOutcome } from '../command-outcome.js';
import { createHash } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { execEnv, ringHosts } from '../exec-env.js';
import { runnerIdOf, shardOf, type RunnerInstance } from '../../../protocols/runner-instance.js';
import type { RunnerStatus } from '../../../protocols/runner-status.js';
import type { RunnerStartConfig } from '../../../protocols/runner.js';
import type { RunnerProcess } from './runner-process.js';

export interface TaskSpec {
  readonly taskId: string;
  readonly instanceId: string;
  readonly kind: string;
  readonly params?: Readonly<Record<string, unknown>>;
  readonly timeoutMs?: number;
}

export interface Queued extends TaskSpec {
  /** Started by the supervisor itself (auto exec): not a cluster task, so not reported as one. */
  readonly local: boolean;
}

export interface LocalRunner {
  instance: RunnerInstance;
  readonly runnerId: string;
  readonly rank: number;
  proc: RunnerProcess | undefined;
  /** Processes started for this runner so far. */
  generation: number;
  status: RunnerStatus | undefined;
  failures: number;
  gaveUp: boolean;
  /** Stopped because another runner of the instance failed; respawned once none is Failed. */
  parked: boolean;
  deleting: boolean;
  stepInFlight: string | undefined;
  queue: Queued[];
  readonly sent: Map<string, { task: Queued; timer?: NodeJS.Timeout; timedOut: boolean }>;
  /** Every cluster task admitted to this runner: a task delivered twice (event and state catch-up) runs once. */
  readonly admitted: Set<string>;
  /** Cluster tasks cancelled here (a cancel heard twice acts once). */
  readonly cancelled: Set<string>;
  restartTimer?: NodeJS.Timeout;
  stableTimer?: NodeJS.Timeout;
  /** Cluster state carries the state name only: Loading progress is not re-proposed. */
  lastProposed?: string;
  /** The exec command was queued for this runner process already (once per process). */
  autoQueued: boolean;
  /** How the exec command ended, told with the Ready status that follows it. */
  commandOutcome?: CommandOutcome;
  /** The paths of the workload's artifacts (TORUS_ARTIFACT_*), once this node holds them all. */
  artifactEnv?: Readonly<Record<string, string>>;
}

export function newLocalRunner(instance: RunnerInstance, nodeId: string, rank: number): LocalRunner {
  return {
    instance,
    runnerId: runnerIdOf(instance.id, nodeId),
    rank,
    proc: undefined,
    generation: 0,
    status: undefined,
    failures: 0,
    gaveUp: false,
    parked: false,
    deleting: false,
    stepInFlight: undefined,
    queue: [],
    sent: new Map(),
    admitted: new Set(),
    cancelled: new Set(),
    autoQueued: false,
  };
}

/** Percent-style escaping of everything but [A-Za-z0-9._-] ('@' included): injective, and safe as a file name. */
const escapeId = (id: string): string =>
  id.replace(/[^A-Za-z0-9._-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);
/** File names stay under the usual 255-byte limit; longer names keep a prefix plus a hash of both ids. */
const MAX_NAME = 200;

/**
 * `<dataDir>/runners/<instance>@<node>/` (hostfile.json, stdout.*.log, stderr.*.log), each id escaped so that distinct
 * (instance, node) pairs never share a directory (`a:b` and `a_b` used to). Over-long names end in `~<hash>`;
 * `~` never appears in an escaped id, so a hashed name cannot equal a plain one.
 */
export function runnerDir(dataDir: string, instanceId: string, nodeId: string): string {
  let name = `${escapeId(instanceId)}@${escapeId(nodeId)}`;
  if (name.length > MAX_NAME)
    name = `${name.slice(0, MAX_NAME - 34)}~${createHash('sha256').update(`${instanceId}\0${nodeId}`).digest('hex').slice(0, 32)}`;
  return join(dataDir, 'runners', name);
}

/** The interface holding `ip` on this machine (what this node's profile lists), or undefined. */
export function localInterfaceOf(ip: string): string | undefined {
  for (const [name, addrs] of Object.entries(networkInterfaces()))
    if (addrs?.some((a) => a.address === ip)) return name;
  return undefined;
}

export function startConfig(
  instance: RunnerInstance,
  nodeId: string,
  runnerId: string,
  dir: string,
): RunnerStartConfig {
  const shard = shardOf(instance, nodeId);
  if (!shard) throw new Error(`node ${nodeId} has no shard in instance ${instance.id}`);
  const hostfilePath = join(dir, 'hostfile.json');
  const { workload } = instance;
  return {
    runnerId,
    instanceId: instance.id,
    nodeId,
    rank: shard.rank,
    worldSize: shard.worldSize,
    layerStart: shard.startLayer,
    layerEnd: shard.endLayer,
    workload:
      workload.kind === 'exec'
        ? { kind: 'exec', command: workload.command, ...(workload.cwd ? { cwd: workload.cwd } : {}) }
        : { kind: 'ring' },
    hosts: ringHosts(instance, nodeId),
    hostfilePath,
    // The placement's variables, then the workload's own: what the user set wins (as with torchrun).
    env: {
      ...execEnv(instance, nodeId, {
        hostfilePath,
        ifaceOf: localInterfaceOf,
        restartCount: instance.restarts ?? 0,
        maxRestarts: workload.kind === 'exec' ? (workload.maxRestarts ?? 0) : 0,
      }),
      ...(workload.kind === 'exec' ? (workload.env ?? {}) : {}),
    },
  };
}
