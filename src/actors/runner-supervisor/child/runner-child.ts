/**
 * The runner process's logic (exo's runner.py): the lifecycle statechart driven by tasks from the
 * supervisor. Per task: "running", the new status, ack, the work, "complete" (or failed/cancelled), the
 * resulting status — exo's canonical order. A task id seen before is acknowledged again but not run.
 * A step outside the lifecycle is refused (task failed), not a crash. A failed lifecycle step reports
 * Failed(reason) and the process exits 1, so the supervisor restarts it with backoff.
 */
import { createActor } from 'xstate';
import { asTorusError } from '../../../protocols/errors.js';
import { runnerLifecycle, sameStatus, statusOf, type LifecycleEvent } from './lifecycle.js';
import type { RunnerStatus } from '../../../protocols/runner-status.js';
import { admitTask, emptyLedger, setTaskStatus, type TaskLedger } from './task-ledger.js';
import type { DownFrame, RunnerStartConfig, UpFrame } from '../../../protocols/runner.js';
import { totalLayers, type RunnerWorkload } from './workload.js';

export interface RunnerChildIo {
  send(frame: UpFrame): void;
  /** Called once the runner is done (Shutdown → 0, Failed → 1). */
  exit(code: number): void;
}

export const CANCEL_ALL = '*';

export class RunnerChild {
  readonly #io: RunnerChildIo;
  readonly #workload: RunnerWorkload;
  readonly #config: RunnerStartConfig;
  readonly #actor = createActor(runnerLifecycle);
  #ledger: TaskLedger = emptyLedger;
  #lastStatus: RunnerStatus | undefined;
  readonly #running = new Map<string, AbortController>();
  #exiting = false;

  constructor(config: RunnerStartConfig, workload: RunnerWorkload, io: RunnerChildIo) {
    this.#config = config;
    this.#workload = workload;
    this.#io = io;
    this.#actor.subscribe((snapshot) => {
      const status = statusOf(snapshot);
      if (sameStatus(this.#lastStatus, status)) return;
      this.#lastStatus = status;
      this.#safeSend({ type: 'status', status });
    });
    this.#actor.start();
  }

  get status(): RunnerStatus {
    return statusOf(this.#actor.getSnapshot());
  }

  #safeSend(frame: UpFrame): void {
    try {
      this.#io.send(frame);
    } catch {
      // The supervisor is gone; the channel-close handler ends this process.
    }
  }

  #taskStatus(
    taskId: string,
    status: 'running' | 'complete' | 'failed' | 'cancelled',
    extra: { result?: unknown; error?: string } = {},
  ): void {
    const next = setTaskStatus(this.#ledger, taskId, status);
    if (next === this.#ledger) return;
    this.#ledger = next;
    this.#safeSend({ type: 'task-status', taskId, status, ...extra });
  }

  handle(frame: DownFrame): void {
    if (frame.type === 'start') return; // only the first start configures; later ones are ignored
    if (frame.type === 'cancel') return this.#cancel(frame.taskId);
    const admitted = admitTask(this.#ledger, frame.taskId);
    if (!admitted.admitted) {
      this.#safeSend({ type: 'ack', taskId: frame.taskId }); // a duplicate: ack again, run once
      return;
    }
    this.#ledger = admitted.ledger;
    const event: LifecycleEvent =
      frame.type === 'task'
        ? { type: 'run' }
        : frame.type === 'load'
          ? { type: 'load', totalLayers: totalLayers(this.#config) }
          : { type: frame.type };
    if (!this.#actor.getSnapshot().can(event)) {
      const error = `${frame.type === 'task' ? `task ${frame.op}` : frame.type} refused in state ${String(this.#actor.getSnapshot().value)}`;
      this.#safeSend({ type: 'ack', taskId: frame.taskId });
      this.#taskStatus(frame.taskId, 'running');
      this.#taskStatus(frame.taskId, 'failed', { error });
      this.#safeSend({ type: 'diagnostic', level: 'warn', message: error });
      return;
    }
    this.#taskStatus(frame.taskId, 'running');
    this.#actor.send(event);
    this.#safeSend({ type: 'ack', taskId: frame.taskId });
    void this.#perform(frame);
  }

  async #perform(frame: Exclude<DownFrame, { type: 'start' | 'cancel' }>): Promise<void> {
    const controller = new AbortController();
    this.#running.set(frame.taskId, controller);
    try {
      switch (frame.type) {
        case 'connect':
          await this.#workload.connect(controller.signal);
          this.#taskStatus(frame.taskId, 'complete');
          this.#actor.send({ type: 'connected' });
          break;
        case 'load':
          await this.#workload.load((layersLoaded) => this.#actor.send({ type: 'progress', layersLoaded }));
          this.#taskStatus(frame.taskId, 'complete');
          this.#actor.send({ type: 'loaded' });
          break;
        case 'warmup':
          await this.#workload.warmup(controller.signal);
          this.#taskStatus(frame.taskId, 'complete');
          this.#actor.send({ type: 'ready' });
          break;
        case 'task': {
          const result = await this.#workload.run(frame.op, frame.params, controller.signal);
          this.#taskStatus(frame.taskId, 'complete', result === undefined ? {} : { result });
          this.#actor.send({ type: 'taskDone' });
          break;
        }
        case 'shutdown':
          for (const [id, c] of this.#running) if (id !== frame.taskId) c.abort(new Error('runner shutting down'));
          await this.#workload.close();
          this.#taskStatus(frame.taskId, 'complete');
          this.#actor.send({ type: 'stopped' });
          this.#finish(0);
          break;
      }
    } catch (err) {
      const message = asTorusError(err).message;
      if (controller.signal.aborted) {
        this.#taskStatus(frame.taskId, 'cancelled', { error: message });
        if (frame.type === 'task') this.#actor.send({ type: 'taskDone' });
      } else {
        this.#taskStatus(frame.taskId, 'failed', { error: message });
        if (frame.type === 'task') this.#actor.send({ type: 'taskDone' });
        else this.fail(`${frame.type} failed: ${message}`);
      }
    } finally {
      this.#running.delete(frame.taskId);
    }
    // A broken workload (ring closed by a cancel, a peer lost) cannot run more tasks: fail, so the supervisor
    // restarts it. Not while shutting down: closing is then the point.
    const state = String(this.#actor.getSnapshot().value);
    const broken =
      frame.type === 'task' && (state === 'Ready' || state === 'Running') ? this.#workload.broken?.() : undefined;
    if (broken) this.fail(broken);
  }

  #cancel(taskId: string): void {
    const ids = taskId === CANCEL_ALL ? [...this.#running.keys()] : [taskId];
    for (const id of ids) {
      const controller = this.#running.get(id);
      if (controller) controller.abort(new Error(`task ${id} cancelled`));
      else if (!this.#ledger.has(id)) this.#ledger = new Map(this.#ledger).set(id, 'cancelled'); // cancelled before it arrived
    }
    this.#safeSend({ type: 'cancel-ack', taskId });
  }

  /** A fatal error: report Failed with the reason, then exit 1. */
  fail(reason: string, diagnostics: readonly string[] = []): void {
    if (this.#exiting) return;
    this.#actor.send({ type: 'fail', reason, diagnostics });
    for (const c of this.#running.values()) c.abort(new Error(reason));
    void this.#workload.close().finally(() => this.#finish(1));
  }

  /** The supervisor vanished: stop everything, report nothing (nobody listens), exit. */
  async orphaned(): Promise<void> {
    if (this.#exiting) return;
    for (const c of this.#running.values()) c.abort(new Error('supervisor gone'));
    await this.#workload.close();
    this.#finish(0);
  }

  #finish(code: number): void {
    if (this.#exiting) return;
    this.#exiting = true;
    this.#io.exit(code);
  }
}
