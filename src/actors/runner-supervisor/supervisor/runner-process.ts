/**
 * Supervisor side of one runner process (exo's supervisor.py). Spawns `runner-main` in its own process
 * group (so a kill reaches an `exec` command too), captures stdout/stderr into rotating files under `<logDir>`
 * (`stdout.<offset>.log`, rotating-log.ts) and keeps the last lines as diagnostics, hands over tasks and waits for their acks, cancels
 * within a bound, and shuts down by escalation: shutdown frame → SIGTERM → SIGKILL, each with a deadline.
 *
 * ClosedResourceError rule: a send on the closed channel while stopping is swallowed; in normal running it
 * is a fault — the runner is killed and reported Failed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Duplex } from 'node:stream';
import { ClosedResourceError } from '../../../protocols/errors.js';
import type { RunnerStatus, TaskStatus } from '../../../protocols/runner-status.js';
import {
  decodeUpFrame,
  RUNNER_PROTOCOL_VERSION,
  type DownFrame,
  type RunnerStartConfig,
  type UpFrame,
} from '../../../protocols/runner.js';
import { childExecArgv, siblingModule } from '../../../runtime/module-url.js';
import { FrameChannel } from '../shared/frame-channel.js';
import { LineTail } from './line-tail.js';
import { logsWritten, takeWaiting } from './output-drain.js';
import { RotatingLog } from './rotating-log.js';
import { DEFAULT_LOG_ROTATION, type LogRotation } from '../../../protocols/log-rotation.js';

/** Longest wait after a runner's exit for its output to reach the log files. */
const LOGS_DRAIN_MS = 5_000;

export interface ShutdownDeadlines {
  /** Wait this long for a clean exit after the shutdown frame. */
  readonly gracefulMs: number;
  /** Then SIGTERM the group and wait this long. */
  readonly termMs: number;
  /** Then SIGKILL the group and wait this long. */
  readonly killMs: number;
}
export const DEFAULT_DEADLINES: ShutdownDeadlines = { gracefulMs: 3000, termMs: 3000, killMs: 2000 };

export interface RunnerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** We asked it to stop (a clean shutdown, or our own escalation). */
  readonly expected: boolean;
  /** "exitcode=N" / "signal=SIGKILL", plus the fault or the runner's own Failed reason when there is one. */
  readonly cause: string;
  readonly diagnostics: readonly string[];
}

export type RunnerProcessEvent =
  | { readonly type: 'status'; readonly status: RunnerStatus }
  | {
      readonly type: 'task-status';
      readonly taskId: string;
      readonly status: TaskStatus;
      readonly result?: unknown;
      readonly error?: string;
    }
  | { readonly type: 'diagnostic'; readonly level: string; readonly message: string }
  | { readonly type: 'exit'; readonly exit: RunnerExit };

export interface RunnerProcessOptions {
  readonly config: RunnerStartConfig;
  readonly logDir: string;
  /** How stdout and stderr rotate (default 10 files × 10 MiB each). */
  readonly logRotation?: LogRotation;
  readonly onEvent: (event: RunnerProcessEvent) => void;
  readonly diagnosticLines?: number;
  /** A cancel not acknowledged within this is a fault (exo: 0.5 s). */
  readonly cancelTimeoutMs?: number;
  /** A task not acknowledged within this (counted once the runner is up) is a fault. */
  readonly ackTimeoutMs?: number;
  /** A runner that has not reported its first status within this is a fault (module loading can be slow). */
  readonly startTimeoutMs?: number;
  /** Extra environment for the runner process itself (test hooks). */
  readonly env?: Readonly<Record<string, string>>;
  /** Told of output that could not be written to the log files (rotating-log.ts). */
  readonly onLogDropped?: (stream: 'stdout' | 'stderr', bytes: number, error: Error) => void;
}

type TaskFrame = Exclude<DownFrame, { type: 'start' | 'cancel' }>;

export class RunnerProcess {
  readonly #opts: RunnerProcessOptions;
  readonly #tail: LineTail;
  #child: ChildProcess | undefined;
  #channel: FrameChannel<UpFrame, DownFrame> | undefined;
  #logs: RotatingLog[] = [];
  #status: RunnerStatus = { state: 'Idle' };
  #stopping = false;
  #fault: string | undefined;
  #swallowed = 0;
  readonly #acks = new Map<string, { promise: Promise<boolean>; resolve: (ok: boolean) => void }>();
  readonly #cancelAcks = new Map<string, (ok: boolean) => void>();
  #exit: RunnerExit | undefined;
  /** Bytes read from stdout and stderr (the log files are given all of them, in order). */
  readonly #received: number[] = [];
  /** Frames wait behind a task outcome whose output is not on disk yet (#receive); undefined when none waits. */
  #held: Promise<void> | undefined;
  #markUp!: () => void;
  /** Resolves at the runner's first status frame (it is running and reading its channel). */
  readonly #up = new Promise<void>((resolve) => (this.#markUp = resolve));
  readonly #exited: Promise<RunnerExit>;
  #resolveExited!: (exit: RunnerExit) => void;

  constructor(options: RunnerProcessOptions) {
    this.#opts = options;
    this.#tail = new LineTail(options.diagnosticLines ?? 40);
    this.#exited = new Promise((resolve) => (this.#resolveExited = resolve));
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }
  get status(): RunnerStatus {
    return this.#status;
  }
  get exited(): Promise<RunnerExit> {
    return this.#exited;
  }
  get exit(): RunnerExit | undefined {
    return this.#exit;
  }
  /** Sends that met a closed channel while stopping and were swallowed (the ClosedResourceError case). */
  get swallowedSends(): number {
    return this.#swallowed;
  }
  get diagnostics(): string[] {
    return this.#tail.lines();
  }
  /** Whether the frame channel to the runner is closed (by either side, or never opened). */
  get channelClosed(): boolean {
    return this.#channel?.closed ?? true;
  }

  start(): void {
    if (this.#child) return;
    const { config, logDir } = this.#opts;
    // Logs hold whatever the job prints (tokens, data): owner only. chmod too: older files were 0644.
    mkdirSync(dirname(logDir), { recursive: true, mode: 0o700 });
    mkdirSync(logDir, { recursive: true, mode: 0o700 });
    chmodSync(logDir, 0o700);
    const entry = siblingModule(import.meta.url, '../child/runner-main');
    const child = spawn(process.execPath, [...childExecArgv(import.meta.url), entry.pathname], {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, ...this.#opts.env },
    });
    this.#child = child;
    for (const [name, stream] of [
      ['stdout', child.stdout],
      ['stderr', child.stderr],
    ] as const) {
      const file = new RotatingLog(logDir, name, this.#opts.logRotation ?? DEFAULT_LOG_ROTATION, (bytes, error) =>
        this.#opts.onLogDropped?.(name, bytes, error),
      );
      file.on('error', () => {}); // a log must not take the supervisor down
      const index = this.#logs.push(file) - 1;
      this.#received.push(0);
      if (!stream) continue;
      stream.pipe(file); // paused while the disk is behind
      stream.on('data', (chunk: Buffer) => {
        this.#received[index]! += chunk.length;
        this.#tail.push(chunk, name);
      });
    }
    this.#channel = new FrameChannel<UpFrame, DownFrame>(
      `runner ${config.runnerId} channel`,
      child.stdio[3] as Duplex,
      decodeUpFrame,
      {
        onFrame: (frame) => this.#receive(frame),
        onInvalid: (err) => this.#tail.note(`invalid frame from runner: ${err.message}`),
        onClose: () => {},
      },
    );
    child.once('error', (err) => this.#onGone(null, null, `spawn failed: ${err.message}`));
    child.once('exit', (code, signal) => this.#onGone(code, signal));
    this.#send({ type: 'start', v: RUNNER_PROTOCOL_VERSION, config });
    const startTimeoutMs = this.#opts.startTimeoutMs ?? 60_000;
    const timer = setTimeout(() => this.fault(`runner did not start within ${startTimeoutMs} ms`), startTimeoutMs);
    void Promise.race([this.#up, this.#exited]).then(() => clearTimeout(timer));
  }

  /**
   * A task's outcome (a command's exit) may arrive before the command's last output: the pipes are read on another
   * path than the frames, and behind the disk. So the pipes are read empty first (pipe-drain.ts), and the outcome, and
   * every frame after it, wait until the log files hold what was read (LOGS_DRAIN_MS at most): a reader that stops at
   * a command's end has all its output.
   */
  #receive(frame: UpFrame): void {
    const outcome = frame.type === 'task-status' && frame.status !== 'running';
    if (this.#held === undefined && !outcome) return this.#onFrame(frame);
    const onDisk = outcome
      ? Promise.race([
          Promise.all(this.#logs.map((log, i) => log.settled(this.#taken(i)))),
          new Promise<void>((resolve) => setTimeout(resolve, LOGS_DRAIN_MS).unref()),
        ])
      : undefined;
    const held: Promise<void> = (this.#held ?? Promise.resolve())
      .then(() => onDisk)
      .then(() => {
        if (this.#held === held) this.#held = undefined;
        this.#onFrame(frame);
      });
    this.#held = held;
  }

  /** Reads stream `i`'s pipe empty; answers how many bytes of it the log has been given or will be (buffered). */
  #taken(i: number): number {
    const stream = i === 0 ? this.#child?.stdout : this.#child?.stderr;
    if (!stream) return 0;
    takeWaiting(stream);
    return (this.#received[i] ?? 0) + stream.readableLength;
  }

  #onFrame(frame: UpFrame): void {
    switch (frame.type) {
      case 'status':
        this.#markUp();
        this.#status = frame.status;
        if (frame.status.state === 'Failed') this.#tail.note(`runner failed: ${frame.status.reason}`);
        this.#opts.onEvent({ type: 'status', status: frame.status });
        break;
      case 'ack':
        this.#acks.get(frame.taskId)?.resolve(true);
        break;
      case 'cancel-ack':
        this.#cancelAcks.get(frame.taskId)?.(true);
        break;
      case 'task-status':
        this.#opts.onEvent(frame);
        break;
      case 'diagnostic':
        this.#tail.note(`${frame.level}: ${frame.message}`);
        this.#opts.onEvent(frame);
        break;
      case 'fatal':
        this.#tail.note(`fatal: ${frame.message}`);
        break;
    }
  }

  /** false when the frame could not be sent (swallowed while stopping; a fault otherwise). */
  #send(frame: DownFrame): boolean {
    try {
      if (!this.#channel) throw new ClosedResourceError('runner channel (not started)');
      this.#channel.send(frame);
      return true;
    } catch (err) {
      if (!(err instanceof ClosedResourceError)) throw err;
      if (this.#stopping) this.#swallowed += 1;
      else if (!this.#exit) this.fault(`send ${frame.type} on a closed channel`);
      return false;
    }
  }

  /** Hands a task over; resolves true once acknowledged, false if it could not be (never rejects). A resend is a no-op. */
  startTask(frame: TaskFrame): Promise<boolean> {
    const known = this.#acks.get(frame.taskId);
    if (known) return known.promise;
    let resolve!: (ok: boolean) => void;
    const promise = new Promise<boolean>((r) => (resolve = r));
    this.#acks.set(frame.taskId, { promise, resolve });
    const ackTimeoutMs = this.#opts.ackTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    void this.#up.then(() => {
      if (settled) return;
      timer = setTimeout(() => {
        if (!this.#stopping && !this.#exit)
          this.fault(`no ack for ${frame.type} ${frame.taskId} within ${ackTimeoutMs} ms`);
        resolve(false);
      }, ackTimeoutMs);
    });
    void promise.finally(() => {
      settled = true;
      clearTimeout(timer);
    });
    if (!this.#send(frame)) resolve(false);
    return promise;
  }

  /** Cancels a task; true when the runner confirmed in time. No answer in time → the runner is failed. */
  cancelTask(taskId: string): Promise<boolean> {
    const timeoutMs = this.#opts.cancelTimeoutMs ?? 500;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#cancelAcks.delete(taskId);
        if (!this.#stopping && !this.#exit) this.fault(`no answer to cancel of ${taskId} within ${timeoutMs} ms`);
        resolve(false);
      }, timeoutMs);
      this.#cancelAcks.set(taskId, (ok) => {
        clearTimeout(timer);
        this.#cancelAcks.delete(taskId);
        resolve(ok);
      });
      if (!this.#send({ type: 'cancel', taskId })) {
        clearTimeout(timer);
        this.#cancelAcks.delete(taskId);
        resolve(false);
      }
    });
  }

  /** A fault in normal running: kill the group; the exit is then reported as a failure with this reason. */
  fault(reason: string): void {
    if (this.#exit || this.#fault) return;
    this.#fault = reason;
    this.#tail.note(`supervisor: ${reason}`);
    this.#killGroup('SIGKILL');
  }

  #killGroup(signal: NodeJS.Signals): void {
    const pid = this.#child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        process.kill(pid, signal);
      } catch {
        /* already gone */
      }
    }
  }

  /** Graceful shutdown with escalation; resolves with the exit. Idempotent. */
  async shutdown(
    deadlines: ShutdownDeadlines = DEFAULT_DEADLINES,
    taskId = `shutdown:${this.#opts.config.runnerId}`,
  ): Promise<RunnerExit> {
    this.#stopping = true;
    if (this.#exit) return this.#exit;
    if (!this.#child) {
      this.#onGone(null, null, 'never started');
      return this.#exited;
    }
    void this.startTask({ type: 'shutdown', taskId });
    const within = (ms: number): Promise<boolean> =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        void this.#exited.then(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    if (await within(deadlines.gracefulMs)) return this.#exited;
    this.#tail.note(`supervisor: no exit within ${deadlines.gracefulMs} ms of shutdown, SIGTERM`);
    this.#killGroup('SIGTERM');
    if (await within(deadlines.termMs)) return this.#exited;
    this.#tail.note(`supervisor: no exit within ${deadlines.termMs} ms of SIGTERM, SIGKILL`);
    this.#killGroup('SIGKILL');
    await within(deadlines.killMs);
    return this.#exited;
  }

  #onGone(code: number | null, signal: NodeJS.Signals | null, note?: string): void {
    if (this.#exit) return;
    if (note) this.#tail.note(note);
    // Leftovers of the group (an exec command the runner could not stop) go with it.
    this.#killGroup('SIGKILL');
    const exitPart = signal ? `signal=${signal}` : `exitcode=${code ?? 'unknown'}`;
    const expected = this.#stopping && !this.#fault;
    const own = this.#status.state === 'Failed' ? this.#status.reason : undefined;
    const cause = [this.#fault, own, exitPart].filter((x) => x !== undefined).join('; ');
    const clean = code === 0 && this.#status.state === 'Shutdown';
    // Output written just before the exit may still be in the pipes: report once every line is on disk, so a reader
    // that stops at the exit (run, follow=1) misses none. Bounded: a leftover holding a pipe open was killed above.
    void logsWritten([this.#child?.stdout, this.#child?.stderr], this.#logs, LOGS_DRAIN_MS)
      .then(() => this.#held) // frames from before the exit are reported before it
      .then(() => {
        const exit: RunnerExit = { code, signal, expected: expected || clean, cause, diagnostics: this.#tail.lines() };
        this.#exit = exit;
        for (const { resolve } of this.#acks.values()) resolve(false);
        for (const done of [...this.#cancelAcks.values()]) done(false);
        this.#channel?.close();
        const final: RunnerStatus = exit.expected
          ? { state: 'Shutdown' }
          : { state: 'Failed', reason: `Terminated (${cause})`, diagnostics: exit.diagnostics };
        if (this.#status.state !== final.state || final.state === 'Failed') {
          this.#status = final;
          this.#opts.onEvent({ type: 'status', status: final });
        }
        this.#opts.onEvent({ type: 'exit', exit });
        this.#resolveExited(exit);
      });
  }
}
