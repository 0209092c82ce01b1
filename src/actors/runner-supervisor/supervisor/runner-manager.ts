/**
 * The runners of one node: one RunnerProcess per (instance, node) assigned here. Fed with the applied
 * cluster facts (instances created/replaced/deleted, other nodes' runner statuses, tasks, cancellations),
 * it drives each runner through the lifecycle with `decideNextStep`, restarts runners that exit
 * unexpectedly with backoff and gives the instance up after the limit, and reports what happened as
 * cluster events (`onEvent`) for the caller to propose. Usable directly (tests, embedding) or from the
 * runner-supervisor actor. The tasks handed to each runner, and which of their statuses this node reports,
 * are in runner-tasks.ts.
 */
import { decideRestartInRow, RUNNER_RESTART_POLICY, type RestartPolicy } from '../../../runtime/restart-policy.js';
import { decideNextStep } from './coordination.js';
import { DEFAULT_MAX_RUNNERS, execDecision, type ExecPolicy } from '../../../protocols/exec-policy.js';
import { shardOf, type RunnerInstance } from '../../../protocols/runner-instance.js';
import type { RunnerStatus, TaskStatus } from '../../../protocols/runner-status.js';
import type { RunnerStartConfig } from '../../../protocols/runner.js';
import type {
  InstanceCompleted,
  InstanceFailed,
  RunnerStatusChanged,
  TaskStatusChanged,
} from '../../../protocols/events.js';
import { DEFAULT_LOG_ROTATION, rotationFor, type LogRotation } from '../../../protocols/log-rotation.js';
import { jobFailure } from './job-outcome.js';
import { newLocalRunner, startConfig, type LocalRunner as Local, type TaskSpec } from './local-runner.js';
import { runnerDir } from '../shared/run-dir.js';
import { DEFAULT_DEADLINES, RunnerProcess, type RunnerProcessEvent, type ShutdownDeadlines } from './runner-process.js';
import { dispatchNext, failSentTasks, settleTaskStatus } from './runner-tasks.js';

export type { TaskSpec } from './local-runner.js';

export type ManagerEvent = RunnerStatusChanged | TaskStatusChanged | InstanceFailed | InstanceCompleted;

export interface RunnerManagerOptions {
  readonly nodeId: string;
  /** Runner files go to `<dataDir>/runners/<runnerId>/` (hostfile.json, stdout.*.log, stderr.*.log). */
  readonly dataDir: string;
  /** This node's default log rotation (an instance's `workload.logs` wins); default 10 files × 10 MiB per stream. */
  readonly logRotation?: LogRotation;
  readonly onEvent: (event: ManagerEvent) => void;
  readonly policy?: RestartPolicy;
  readonly deadlines?: ShutdownDeadlines;
  readonly cancelTimeoutMs?: number;
  readonly ackTimeoutMs?: number;
  /** A runner Ready this long has its failure count forgotten. */
  readonly stableResetMs?: number;
  /** Start an exec workload's command as soon as every runner is Ready (default true). */
  readonly autoExec?: boolean;
  /** Extra environment for runner processes (test hooks). */
  readonly runnerEnv?: Readonly<Record<string, string>>;
  /** Data-plane key handed to ring runners in their start frame (never in the environment); null: open mode. */
  readonly dataKey?: string | null;
  /** Told of every runner process started (logging, tests). */
  readonly onSpawn?: (runnerId: string, pid: number | undefined, generation: number) => void;
  /**
   * Which `exec` commands this node runs. Checked here, at spawn time, whoever proposed the instance:
   * a refused runner is Failed with the reason and no process is started. Default false: exec is off.
   */
  readonly allowExec?: ExecPolicy;
  /** Runners held at once (default 8); one more is refused the same way, naming the quota. */
  readonly maxRunners?: number;
  /** Told once each time the runner quota is reached (the node logs it). */
  readonly onLimit?: (message: string) => void;
  /** Told of runner output that could not be written to its log files (the node logs and counts it). */
  readonly onLogDropped?: (runnerId: string, stream: 'stdout' | 'stderr', bytes: number, error: Error) => void;
  /**
   * For an instance that lists artifacts: resolves, once this node holds every one of them complete (fetching what
   * is missing), with the runner's environment naming their paths; rejects with the reason it cannot have them.
   * `cancelled()` turns true when the runner is no longer wanted. Absent: such an instance is refused.
   */
  readonly awaitArtifacts?: (
    instance: RunnerInstance,
    cancelled: () => boolean,
  ) => Promise<Readonly<Record<string, string>>>;
}

/** Cancels heard for tasks of no runner here, remembered (see #unmatchedCancels). */
const MAX_UNMATCHED_CANCELS = 4096;
/** Runner pids remembered for tests that check every runner is gone (a node may start millions in a year). */
const MAX_PIDS_KEPT = 1024;

export class RunnerManager {
  readonly #o: RunnerManagerOptions;
  readonly #locals = new Map<string, Local>();
  readonly #peers = new Map<string, Map<string, RunnerStatus>>();
  /** Per exec instance, the nodes whose command exited 0 (a job completes when every rank's did). */
  readonly #exitedOk = new Map<string, Set<string>>();
  /**
   * Cancels of tasks no runner here admitted (another node's tasks: every node hears every cancel), newest last and
   * at most MAX_UNMATCHED_CANCELS: a task that a catch-up delivers after its cancel is still refused, and a node
   * that runs for months does not keep every cancel it ever heard. Admitted and cancelled tasks are kept per runner
   * and go with it.
   */
  readonly #unmatchedCancels = new Set<string>();
  readonly #pids: number[] = [];
  #stopping = false;
  #atLimit = false;

  constructor(options: RunnerManagerOptions) {
    this.#o = options;
  }

  /** The pids of the last MAX_PIDS_KEPT runners this manager started (tests assert they are all gone). */
  get pids(): readonly number[] {
    return this.#pids;
  }

  /** What this manager holds per instance and task, counted: tests check it stays bounded by what runs here. */
  retained(): { runners: number; peerStatuses: number; exitedOk: number; unmatchedCancels: number; pids: number } {
    return {
      runners: this.#locals.size,
      peerStatuses: this.#peers.size,
      exitedOk: this.#exitedOk.size,
      unmatchedCancels: this.#unmatchedCancels.size,
      pids: this.#pids.length,
    };
  }

  runners(): {
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
  }[] {
    return [...this.#locals.values()].map((l) => ({
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
    }));
  }

  instanceCreated(instance: RunnerInstance): void {
    if (this.#stopping || this.#locals.has(instance.id)) return;
    const shard = shardOf(instance, this.#o.nodeId);
    if (!shard) return;
    const local = newLocalRunner(instance, this.#o.nodeId, shard.rank);
    const refusal = this.#refusal(instance);
    this.#locals.set(instance.id, local);
    if (refusal) return this.#refuse(local, refusal);
    if (instance.artifacts?.length || instance.model) return this.#spawnWithArtifacts(local);
    this.#spawn(local);
  }

  /** The runner starts only once its node holds the workload's artifacts; a failed transfer fails it with the reason. */
  #spawnWithArtifacts(local: Local): void {
    const node = this.#o.nodeId;
    const gone = (): boolean => this.#stopping || local.deleting || this.#locals.get(local.instance.id) !== local;
    if (!this.#o.awaitArtifacts)
      return this.#refuse(
        local,
        `node ${node} runs no artifact service: cannot provide artifacts ${[...(local.instance.artifacts ?? []), ...(local.instance.model ? [local.instance.model] : [])].join(', ')}`,
      );
    this.#o.awaitArtifacts(local.instance, gone).then(
      (env) => {
        if (!gone()) {
          local.artifactEnv = env;
          this.#spawn(local);
        }
      },
      (error: unknown) => {
        if (!gone()) this.#refuse(local, (error instanceof Error ? error.message : String(error)).slice(0, 900));
      },
    );
  }

  /** Why this node will not start a runner for `instance` (exec policy, runner quota), or undefined. */
  #refusal(instance: RunnerInstance): string | undefined {
    const node = this.#o.nodeId;
    if (instance.workload.kind === 'exec') {
      const command = instance.workload.command[0] ?? '';
      const decision = execDecision(this.#o.allowExec ?? false, command);
      if (!decision.allowed)
        return `node ${node} refuses to run ${JSON.stringify(command.slice(0, 200))}: ${decision.rule}`.slice(0, 900);
    }
    const max = this.#o.maxRunners ?? DEFAULT_MAX_RUNNERS;
    const held = [...this.#locals.values()].filter((l) => !l.gaveUp && !l.deleting).length;
    if (held < max) {
      this.#atLimit = false;
      return undefined;
    }
    const message = `node ${node} is at its runner quota: ${held} of ${max} runners (--max-runners=${max})`;
    if (!this.#atLimit) this.#o.onLimit?.(message);
    this.#atLimit = true;
    return message;
  }

  /** A runner that must not start: Failed with the reason, no process, and the instance fails (its siblings stop). */
  #refuse(local: Local, reason: string): void {
    local.gaveUp = true;
    const status: RunnerStatus = { state: 'Failed', reason, diagnostics: [] };
    local.status = status;
    this.#proposeStatus(local, status);
    this.#emit({ type: 'InstanceFailed', instanceId: local.instance.id, reason });
  }

  /** A new plan for the same instance id: stop the old runner, start per the new plan with a clean slate. */
  async instanceReplaced(instance: RunnerInstance): Promise<void> {
    const before = this.#locals.get(instance.id);
    await this.instanceDeleted(instance.id);
    this.instanceCreated(instance);
    // The instance's tasks are the same ones: what ran or was cancelled here does not run again after the move.
    const after = this.#locals.get(instance.id);
    if (before && after) {
      for (const id of before.admitted) after.admitted.add(id);
      for (const id of before.cancelled) after.cancelled.add(id);
    }
  }

  async instanceDeleted(instanceId: string): Promise<void> {
    this.#peers.delete(instanceId);
    this.#exitedOk.delete(instanceId);
    const local = this.#locals.get(instanceId);
    if (!local) return;
    this.#locals.delete(instanceId);
    await this.#stop(local);
  }

  /**
   * Another node's runner status, from the applied cluster state (this node's own echoes are ignored). Only a node
   * that runs a rank of the instance keeps it: it is forgotten with that runner, and a node that runs none would
   * otherwise keep one entry for every instance the cluster ever placed.
   */
  runnerStatusChanged(instanceId: string, nodeId: string, status: RunnerStatus, exitCode?: number): void {
    const local = this.#locals.get(instanceId);
    if (nodeId === this.#o.nodeId || !local) return;
    const peers = this.#peers.get(instanceId) ?? new Map<string, RunnerStatus>();
    this.#peers.set(instanceId, peers.set(nodeId, status));
    if (status.state === 'Ready' && exitCode === 0) this.#rankExitedOk(local, nodeId);
    this.#tick(local);
  }

  /** A rank's command exited 0: once every rank's has, this node reports the job completed (any node may; apply dedupes). */
  #rankExitedOk(local: Local, nodeId: string): void {
    const done = this.#exitedOk.get(local.instance.id) ?? new Set<string>();
    this.#exitedOk.set(local.instance.id, done.add(nodeId));
    if (local.instance.nodes.every((n) => done.has(n)) && done.has(this.#o.nodeId)) {
      this.#emit({
        type: 'InstanceCompleted',
        instanceId: local.instance.id,
        reason: `every rank (${local.instance.nodes.length}) exited with code 0`,
      });
    }
  }

  taskCreated(task: TaskSpec): void {
    const local = this.#locals.get(task.instanceId);
    // Sent twice (event and state catch-up), runs once; cancelled before it arrived, never runs.
    if (!local || local.admitted.has(task.taskId) || this.#unmatchedCancels.has(task.taskId)) return;
    local.admitted.add(task.taskId);
    local.queue.push({ ...task, local: false });
    this.#tick(local);
  }

  /** Cancels a queued or running task; a running one must be confirmed by its runner in time or the runner fails. */
  async cancelTask(taskId: string): Promise<void> {
    const owner = [...this.#locals.values()].find((l) => l.admitted.has(taskId));
    if (!owner) {
      this.#unmatchedCancels.add(taskId);
      if (this.#unmatchedCancels.size > MAX_UNMATCHED_CANCELS)
        this.#unmatchedCancels.delete(this.#unmatchedCancels.values().next().value!);
      return;
    }
    if (owner.cancelled.has(taskId)) return;
    owner.cancelled.add(taskId);
    const queued = owner.queue.findIndex((q) => q.taskId === taskId);
    if (queued >= 0) {
      const [task] = owner.queue.splice(queued, 1);
      if (task && !task.local) this.#emit({ type: 'TaskStatusChanged', taskId, status: 'cancelled' });
    }
    if (owner.sent.has(taskId) && owner.proc) await owner.proc.cancelTask(taskId);
  }

  /** Stops every runner (graceful → SIGTERM → SIGKILL) and waits for them. Idempotent. */
  async shutdown(): Promise<void> {
    this.#stopping = true;
    await Promise.all([...this.#locals.values()].map((l) => this.#stop(l)));
  }

  #emit(event: ManagerEvent): void {
    try {
      this.#o.onEvent(event);
    } catch {
      // The consumer's failure (e.g. a closed port during node shutdown) must not break supervision.
    }
  }

  async #stop(local: Local): Promise<void> {
    local.deleting = true;
    clearTimeout(local.restartTimer);
    clearTimeout(local.stableTimer);
    for (const s of local.sent.values()) clearTimeout(s.timer);
    if (local.proc) await local.proc.shutdown(this.#o.deadlines ?? DEFAULT_DEADLINES);
  }

  #spawn(local: Local): void {
    if (this.#stopping || local.deleting) return;
    local.generation += 1;
    local.parked = false;
    local.autoQueued = false;
    local.status = undefined;
    local.stepInFlight = undefined;
    const dir = runnerDir(this.#o.dataDir, local.instance.id, this.#o.nodeId);
    const proc: RunnerProcess = new RunnerProcess({
      config: withArtifactEnv(
        {
          ...startConfig(local.instance, this.#o.nodeId, local.runnerId, dir),
          ...(this.#o.dataKey ? { ringKey: this.#o.dataKey } : {}),
        },
        local.artifactEnv,
      ),
      logDir: dir,
      logRotation: rotationFor(this.#o.logRotation ?? DEFAULT_LOG_ROTATION, local.instance.logs),
      onEvent: (event) => this.#onProcEvent(local, proc, event),
      ...(this.#o.cancelTimeoutMs !== undefined ? { cancelTimeoutMs: this.#o.cancelTimeoutMs } : {}),
      ...(this.#o.ackTimeoutMs !== undefined ? { ackTimeoutMs: this.#o.ackTimeoutMs } : {}),
      ...(this.#o.runnerEnv ? { env: this.#o.runnerEnv } : {}),
      onLogDropped: (stream, bytes, error) => this.#o.onLogDropped?.(local.runnerId, stream, bytes, error),
    });
    local.proc = proc;
    proc.start();
    if (proc.pid !== undefined && this.#pids.push(proc.pid) > MAX_PIDS_KEPT) this.#pids.shift();
    this.#o.onSpawn?.(local.runnerId, proc.pid, local.generation);
  }

  #takeOutcome(local: Local): Partial<RunnerStatusChanged> {
    const outcome = local.commandOutcome;
    local.commandOutcome = undefined;
    return outcome ? { ...outcome } : {};
  }

  #proposeStatus(local: Local, status: RunnerStatus, extra: Partial<RunnerStatusChanged> = {}): void {
    if (status.state === local.lastProposed && status.state !== 'Failed') return;
    local.lastProposed = status.state;
    this.#emit({
      type: 'RunnerStatusChanged',
      instanceId: local.instance.id,
      nodeId: this.#o.nodeId,
      status: status.state,
      ...(status.state === 'Failed' ? { reason: status.reason, diagnostics: [...status.diagnostics] } : {}),
      ...extra,
    });
  }

  #onProcEvent(local: Local, proc: RunnerProcess, event: RunnerProcessEvent): void {
    if (local.proc !== proc) return; // a previous generation
    switch (event.type) {
      case 'status':
        local.status = event.status;
        if (event.status.state === 'Failed') return; // the exit that follows reports it, with exit code and attempt
        this.#proposeStatus(local, event.status, event.status.state === 'Ready' ? this.#takeOutcome(local) : {});
        if (event.status.state === 'Ready') {
          clearTimeout(local.stableTimer);
          local.stableTimer = setTimeout(
            () => (local.failures = 0),
            this.#o.stableResetMs ?? (this.#o.policy ?? RUNNER_RESTART_POLICY).periodMs,
          );
          if (
            local.instance.workload.kind === 'exec' &&
            (this.#o.autoExec ?? true) &&
            !local.autoQueued &&
            !proc.exit
          ) {
            local.autoQueued = true;
            local.queue.push({
              taskId: `${local.runnerId}#${local.generation}:exec`,
              instanceId: local.instance.id,
              kind: 'exec',
              local: true,
            });
          }
        }
        this.#tick(local);
        return;
      case 'task-status':
        return this.#onTaskStatus(local, event.taskId, event.status, event.result, event.error);
      case 'diagnostic':
        return;
      case 'exit':
        return this.#onExit(local, event.exit);
    }
  }

  #onTaskStatus(local: Local, taskId: string, status: TaskStatus, result?: unknown, error?: string): void {
    if (taskId === local.stepInFlight && status !== 'running') {
      local.stepInFlight = undefined;
      this.#tick(local);
      return;
    }
    const before = local.commandOutcome;
    const settled = settleTaskStatus(local, taskId, status, result, error);
    if (!settled) return;
    if (settled.report) this.#emit(settled.report);
    const outcome = local.commandOutcome;
    if (outcome && outcome !== before && status !== 'cancelled') {
      // The job's command on this rank ended: 0 counts toward completion; anything else fails the whole job.
      if (outcome.exitCode === 0 && status === 'complete') this.#rankExitedOk(local, this.#o.nodeId);
      // Its outcome is reported once its output is read (runner-process.ts): the tail holds its last lines.
      else this.#emit(jobFailure(local, this.#o.nodeId, outcome, local.proc?.diagnostics ?? []));
    }
    this.#tick(local);
  }

  #onExit(
    local: Local,
    exit: {
      expected: boolean;
      cause: string;
      diagnostics: readonly string[];
      code: number | null;
      signal: string | null;
    },
  ): void {
    local.proc = undefined;
    local.stepInFlight = undefined;
    clearTimeout(local.stableTimer);
    failSentTasks(local, exit.cause, (event) => this.#emit(event));
    local.queue = local.queue.filter((q) => !q.local);
    if (exit.expected) {
      if (local.status?.state !== 'Shutdown') this.#proposeStatus(local, { state: 'Shutdown' });
      local.status = { state: 'Shutdown' };
      if (local.parked) this.#tick(local);
      return;
    }
    local.failures += 1;
    const status: RunnerStatus = {
      state: 'Failed',
      reason: `Terminated (${exit.cause})`,
      diagnostics: exit.diagnostics,
    };
    local.status = status;
    this.#proposeStatus(local, status, {
      attempt: local.failures,
      ...(exit.code !== null ? { exitCode: exit.code } : {}),
      ...(exit.signal ? { signal: exit.signal } : {}),
    });
    if (this.#stopping || local.deleting) return;
    const decision = decideRestartInRow(local.failures, exit.cause, this.#o.policy ?? RUNNER_RESTART_POLICY);
    if (decision.kind === 'give-up') {
      local.gaveUp = true;
      this.#emit({
        type: 'InstanceFailed',
        instanceId: local.instance.id,
        reason: `runner ${local.runnerId}: ${decision.reason}`,
      });
      return;
    }
    local.restartTimer = setTimeout(() => {
      local.restartTimer = undefined;
      this.#spawn(local);
    }, decision.delayMs);
  }

  #tick(local: Local): void {
    if (this.#stopping || local.deleting || local.gaveUp) return;
    const peers = this.#peers.get(local.instance.id) ?? new Map<string, RunnerStatus>();
    if (!local.proc) {
      const peerFailed = [...peers.values()].some((s) => s.state === 'Failed');
      if (local.parked && !peerFailed && !local.restartTimer) this.#spawn(local);
      return;
    }
    const proc = local.proc;
    const worldSize = local.instance.shards.length;
    const statuses = Array.from({ length: worldSize }, (_, r) => {
      if (r === local.rank) return local.status;
      const node = local.instance.shards.find((s) => s.rank === r)?.node;
      return node === undefined ? undefined : peers.get(node);
    });
    for (;;) {
      const step = decideNextStep({
        rank: local.rank,
        worldSize,
        statuses,
        stepInFlight: local.stepInFlight !== undefined,
        pendingTasks: local.queue.map((q) => q.taskId),
        localSteps: local.instance.workload.kind === 'exec',
      });
      switch (step.kind) {
        case 'wait':
          return;
        case 'shutdown':
          if (local.status?.state === 'Failed') return; // its exit restarts it
          local.parked = true;
          local.stepInFlight = `${local.runnerId}#${local.generation}:shutdown`;
          void proc.shutdown(this.#o.deadlines ?? DEFAULT_DEADLINES, local.stepInFlight);
          return;
        case 'run':
          dispatchNext(local, proc);
          continue; // more queued tasks may go while Running
        default:
          local.stepInFlight = `${local.runnerId}#${local.generation}:${step.kind}`;
          void proc.startTask({ type: step.kind, taskId: local.stepInFlight });
          return;
      }
    }
  }
}

/** The artifacts' paths go under the placement's variables and the workload's own (what the user set wins). */
function withArtifactEnv(
  config: RunnerStartConfig,
  env: Readonly<Record<string, string>> | undefined,
): RunnerStartConfig {
  return env ? { ...config, env: { ...env, ...config.env } } : config;
}
