/**
 * The runners of one node: one RunnerProcess per (instance, node) assigned here. Fed with the applied
 * cluster facts (instances created/replaced/deleted, other nodes' runner statuses, tasks, cancellations),
 * it drives each runner through the lifecycle with `decideNextStep`, restarts runners that exit
 * unexpectedly with backoff and gives the instance up after the limit, and reports what happened as
 * cluster events (`onEvent`) for the caller to propose. Usable directly (tests, embedding) or from the
 * runner-supervisor actor. Beside it: its options (runner-manager-options.ts), whether a runner may start at
 * all (runner-admission.ts), the other ranks' statuses (peer-ranks.ts), the next lifecycle step of a live runner
 * (runner-steps.ts), and the tasks handed to each runner and which of their statuses this node reports
 * (runner-tasks.ts).
 */
import { decideRestartInRow, RUNNER_RESTART_POLICY } from '../../../runtime/restart-policy.js';
import { shardOf, type RunnerInstance } from '../../../protocols/runner-instance.js';
import type { RunnerStatus, TaskStatus } from '../../../protocols/runner-status.js';
import type { RunnerStatusChanged } from '../../../protocols/events.js';
import { DEFAULT_LOG_ROTATION, rotationFor } from '../../../protocols/log-rotation.js';
import { jobFailure } from './job-outcome.js';
import {
  newLocalRunner,
  runnerRow,
  startConfig,
  withArtifactEnv,
  type LocalRunner as Local,
  type TaskSpec,
  type RunnerRow,
} from './local-runner.js';
import { runnerDir } from '../shared/run-dir.js';
import { DEFAULT_DEADLINES, RunnerProcess, type RunnerProcessEvent } from './runner-process.js';
import { failSentTasks, settleTaskStatus } from './runner-tasks.js';
import type { ManagerEvent, RunnerManagerOptions } from './runner-manager-options.js';
import { RunnerAdmission } from './runner-admission.js';
import { PeerRanks } from './peer-ranks.js';
import { stepRunner } from './runner-steps.js';

/** Cancels heard for tasks of no runner here, remembered (see #unmatchedCancels). */
const MAX_UNMATCHED_CANCELS = 4096;
/** Runner pids remembered for tests that check every runner is gone (a node may start millions in a year). */
const MAX_PIDS_KEPT = 1024;

export class RunnerManager {
  readonly #o: RunnerManagerOptions;
  readonly #locals = new Map<string, Local>();
  readonly #peers = new PeerRanks();
  readonly #admission: RunnerAdmission;
  /**
   * Cancels of tasks no runner here admitted (another node's tasks: every node hears every cancel), newest last and
   * at most MAX_UNMATCHED_CANCELS: a task that a catch-up delivers after its cancel is still refused, and a node
   * that runs for months does not keep every cancel it ever heard. Admitted and cancelled tasks are kept per runner
   * and go with it.
   */
  readonly #unmatchedCancels = new Set<string>();
  readonly #pids: number[] = [];
  #stopping = false;

  constructor(options: RunnerManagerOptions) {
    this.#o = options;
    this.#admission = new RunnerAdmission(options.nodeId, options.allowExec, options.maxRunners, options.onLimit);
  }

  /** The pids of the last MAX_PIDS_KEPT runners this manager started (tests assert they are all gone). */
  get pids(): readonly number[] {
    return this.#pids;
  }

  /** What this manager holds per instance and task, counted: tests check it stays bounded by what runs here. */
  retained(): { runners: number; peerStatuses: number; exitedOk: number; unmatchedCancels: number; pids: number } {
    return {
      runners: this.#locals.size,
      ...this.#peers.retained(),
      unmatchedCancels: this.#unmatchedCancels.size,
      pids: this.#pids.length,
    };
  }

  /** Each runner held here, as the actor's `runners` request and snapshot show it. */
  runners(): RunnerRow[] {
    return [...this.#locals.values()].map(runnerRow);
  }

  instanceCreated(instance: RunnerInstance): void {
    if (this.#stopping || this.#locals.has(instance.id)) return;
    const shard = shardOf(instance, this.#o.nodeId);
    if (!shard) return;
    const local = newLocalRunner(instance, this.#o.nodeId, shard.rank);
    const held = [...this.#locals.values()].filter((l) => !l.gaveUp && !l.deleting).length;
    const refusal = this.#admission.refusal(instance, held);
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
    this.#peers.forget(instanceId);
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
    this.#peers.setStatus(instanceId, nodeId, status);
    if (status.state === 'Ready' && exitCode === 0) this.#rankExitedOk(local, nodeId);
    this.#tick(local);
  }

  /** A rank's command exited 0: once every rank's has, this node reports the job completed (any node may; apply dedupes). */
  #rankExitedOk(local: Local, nodeId: string): void {
    if (this.#peers.exitedOk(local.instance, nodeId, this.#o.nodeId)) {
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
    const peers = this.#peers.statuses(local.instance.id);
    if (!local.proc) {
      const peerFailed = [...peers.values()].some((s) => s.state === 'Failed');
      if (local.parked && !peerFailed && !local.restartTimer) this.#spawn(local);
      return;
    }
    stepRunner(local, local.proc, peers, this.#o.deadlines ?? DEFAULT_DEADLINES);
  }
}
