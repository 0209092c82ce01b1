/**
 * The supervisor's record of one runner of this node (one per instance assigned here), and the start
 * configuration of its process: placement → RunnerStartConfig (env from execEnv, MLX hostfile entries).
 */
import type { CommandOutcome } from '../core/runner/command-outcome.js';
import { join } from 'node:path';
import { execEnv, ringHosts } from '../core/runner/exec-env.js';
import { runnerIdOf, shardOf, type RunnerInstance } from '../core/runner/instance.js';
import type { RunnerStatus } from '../core/runner/status.js';
import type { RunnerStartConfig } from '../protocols/runner.js';
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
  restartTimer?: NodeJS.Timeout;
  stableTimer?: NodeJS.Timeout;
  /** Cluster state carries the state name only: Loading progress is not re-proposed. */
  lastProposed?: string;
  /** The exec command was queued for this runner process already (once per process). */
  autoQueued: boolean;
  /** How the exec command ended, told with the Ready status that follows it. */
  commandOutcome?: CommandOutcome;
}

export function newLocalRunner(instance: RunnerInstance, nodeId: string, rank: number): LocalRunner {
  return {
    instance, runnerId: runnerIdOf(instance.id, nodeId), rank, proc: undefined, generation: 0, status: undefined, failures: 0,
    gaveUp: false, parked: false, deleting: false, stepInFlight: undefined, queue: [], sent: new Map(), autoQueued: false,
  };
}

const safe = (id: string): string => id.replace(/[^A-Za-z0-9._@-]/g, '_');

/** `<dataDir>/runners/<runnerId>/`: hostfile.json, stdout.log, stderr.log. */
export function runnerDir(dataDir: string, runnerId: string): string {
  return join(dataDir, 'runners', safe(runnerId));
}

export function startConfig(instance: RunnerInstance, nodeId: string, runnerId: string, dir: string): RunnerStartConfig {
  const shard = shardOf(instance, nodeId);
  if (!shard) throw new Error(`node ${nodeId} has no shard in instance ${instance.id}`);
  const hostfilePath = join(dir, 'hostfile.json');
  const { workload } = instance;
  return {
    runnerId, instanceId: instance.id, nodeId, rank: shard.rank, worldSize: shard.worldSize, layerStart: shard.startLayer, layerEnd: shard.endLayer,
    workload: workload.kind === 'exec' ? { kind: 'exec', command: workload.command, ...(workload.cwd ? { cwd: workload.cwd } : {}) } : { kind: 'ring' },
    hosts: ringHosts(instance, nodeId), hostfilePath,
    // The workload's own variables first: the placement's win on a conflict.
    env: { ...(workload.kind === 'exec' ? workload.env ?? {} : {}), ...execEnv(instance, nodeId, { hostfilePath }) },
  };
}
