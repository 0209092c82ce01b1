/**
 * The supervisor's record of one runner of this node (one per instance assigned here), and the start
 * configuration of its process: placement → RunnerStartConfig (env from execEnv, MLX hostfile entries).
 */
import type { CommandOutcome } from './command-outcome.js';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { execEnv, ringHosts } from './exec-env.js';
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

/** The artifacts' paths go under the placement's variables and the workload's own (what the user set wins). */
export function withArtifactEnv(
  config: RunnerStartConfig,
  env: Readonly<Record<string, string>> | undefined,
): RunnerStartConfig {
  return env ? { ...config, env: { ...env, ...config.env } } : config;
}

/** One runner held here, as the actor's `runners` request and snapshot show it. */
export interface RunnerRow {
  instanceId: string;
  runnerId: string;
  rank: number;
  pid: number | undefined;
  status: RunnerStatus | undefined;
  failures: number;
  gaveUp: boolean;
  queued: number;
  running: number;
  diagnostics: string[];
}

export function runnerRow(l: LocalRunner): RunnerRow {
  return {
    instanceId: l.instance.id,
    runnerId: l.runnerId,
    rank: l.rank,
    pid: l.proc?.pid,
    status: l.status,
    failures: l.failures,
    gaveUp: l.gaveUp,
    queued: l.queue.length,
    running: l.sent.size,
    diagnostics: l.proc?.diagnostics ?? [],
  };
}
