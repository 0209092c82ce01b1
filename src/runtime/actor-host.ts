/**
 * The host side of one actor worker: starts the thread, speaks the mailbox protocol through a FramePort,
 * tracks requests it forwarded into the worker, and reports the worker's life (ready, snapshot, fault, exit).
 * Restart decisions are not made here: the Supervisor owns them.
 */
import { Worker } from 'node:worker_threads';
import { TorusError, type ErrorJson } from '../protocols/errors.js';
import type { Frame } from '../protocols/mailbox.js';
import { FramePort, type PostTarget } from './frame-port.js';
import { DEFAULT_IDLE_COLLECTION_MINUTES } from './idle-collection.js';

export interface ActorSpec {
  readonly name: string;
  /** The worker entry (`src/actors/<name>/worker.ts|js`); see siblingModule. */
  readonly module: URL;
  readonly options?: unknown;
  /**
   * Further addresses the same worker answers at: one thread that owns two concerns' state (the topology keeper's
   * replicated state is the agreement's state machine, so both run where it is applied) keeps both names.
   */
  readonly aliases?: readonly string[];
  /**
   * The thread's V8 old-generation budget, MiB (`resourceLimits.maxOldGenerationSizeMb`); undefined: V8's default,
   * which follows the machine's memory. A thread past it ends with ERR_WORKER_OUT_OF_MEMORY, a crash its supervisor
   * restarts like any other; a limit under 2 GiB also makes V8 commit less beyond a large heap's live objects.
   */
  readonly heapLimitMb?: number;
  /**
   * The thread's young generation, MiB (`resourceLimits.maxYoungGenerationSizeMb`); undefined: V8's default, which
   * grows the new space to tens of MiB under a steady allocation rate and keeps it committed.
   */
  readonly youngGenerationMb?: number;
  /**
   * A full collection after this long without one (idle-collection.ts); 0: never. Undefined: every
   * DEFAULT_IDLE_COLLECTION_MINUTES.
   */
  readonly idleCollectionMs?: number;
}

export interface ActorHostEvents {
  ready(): void;
  snapshot(view: unknown): void;
  /** A worker → address message (or request, when `corr` is set) for the relay. */
  message(frame: Extract<Frame, { t: 'msg' }>): void;
  reply(frame: Extract<Frame, { t: 'reply' }>): void;
  fault(error: ErrorJson, fatal: boolean): void;
  /** The thread ended. `expected` is true after a requested stop. */
  exit(code: number, expected: boolean, error?: Error): void;
}

export type HostState = 'starting' | 'ready' | 'stopping' | 'exited';

export class ActorHost {
  readonly spec: ActorSpec;
  readonly #worker: Worker;
  readonly #port: FramePort;
  readonly #events: ActorHostEvents;
  #state: HostState = 'starting';
  #stopRequested = false;
  #lastError: Error | undefined;
  readonly #exited: Promise<void>;
  #stoppedFrame: (() => void) | undefined;

  constructor(spec: ActorSpec, events: ActorHostEvents) {
    this.spec = spec;
    this.#events = events;
    this.#worker = new Worker(spec.module, {
      workerData: {
        name: spec.name,
        options: spec.options ?? {},
        idleCollectionMs: spec.idleCollectionMs ?? DEFAULT_IDLE_COLLECTION_MINUTES * 60_000,
      },
      resourceLimits: {
        ...(spec.heapLimitMb !== undefined ? { maxOldGenerationSizeMb: spec.heapLimitMb } : {}),
        ...(spec.youngGenerationMb !== undefined ? { maxYoungGenerationSizeMb: spec.youngGenerationMb } : {}),
      },
    });
    this.#port = new FramePort(
      this.#worker as unknown as PostTarget,
      {
        onFrame: (frame) => this.#onFrame(frame),
        onReject: (error) => events.fault(error.toJSON(), false),
      },
      `${spec.name} worker`,
    );
    this.#worker.on('error', (error) => {
      this.#lastError = error;
    });
    this.#exited = new Promise((resolve) => {
      this.#worker.once('exit', (code) => {
        const wasReady = this.#state;
        this.#state = 'exited';
        this.#port.close();
        this.#stoppedFrame?.();
        events.exit(
          code,
          this.#stopRequested,
          this.#lastError ??
            (wasReady === 'starting' && !this.#stopRequested
              ? new Error(`worker exited with code ${code} before it was ready`)
              : undefined),
        );
        resolve();
      });
    });
  }

  get state(): HostState {
    return this.#state;
  }

  get threadId(): number {
    return this.#worker.threadId;
  }

  /** Delivers a frame into the worker. Throws ClosedResourceError once the worker is gone or stopping. */
  deliver(frame: Frame): void {
    if (this.#state === 'exited') this.#port.close();
    this.#port.send(frame);
  }

  /** Posts raw bytes into the worker, bypassing the codec (tests use this to inject malformed frames). */
  postRaw(value: unknown): void {
    this.#worker.postMessage(value);
  }

  /**
   * Ordered stop: ask the actor to finish its current message and clean up; if it has not exited by the
   * deadline, terminate the thread. Idempotent.
   */
  async stop(deadlineMs: number): Promise<void> {
    if (this.#state === 'exited') return this.#exited;
    if (!this.#stopRequested) {
      this.#stopRequested = true;
      this.#state = 'stopping';
      const stoppedFrame = new Promise<void>((resolve) => {
        this.#stoppedFrame = resolve;
      });
      try {
        this.#port.send({ t: 'stop', deadlineMs: Math.max(0, deadlineMs - 50) });
        this.#port.flush();
      } catch {
        // already closed: nothing to ask, terminate below
      }
      const timer = setTimeout(() => void this.#worker.terminate(), deadlineMs);
      timer.unref();
      await Promise.race([stoppedFrame, this.#exited]);
      // The actor said `stopped`; a worker with nothing left on its event loop exits by itself, but timers or
      // sockets an actor forgot would keep it alive: terminate now that its work is done.
      await this.#worker.terminate();
      clearTimeout(timer);
    }
    return this.#exited;
  }

  /**
   * Immediate termination. `asCrash` (a fatal fault) leaves the exit unexpected, so the supervisor restarts;
   * otherwise (a second signal, node teardown) the exit counts as requested.
   */
  async kill(asCrash = false): Promise<void> {
    if (!asCrash) this.#stopRequested = true;
    await this.#worker.terminate();
    return this.#exited;
  }

  #onFrame(frame: Frame): void {
    switch (frame.t) {
      case 'ready':
        if (this.#state === 'starting') this.#state = 'ready';
        this.#events.ready();
        return;
      case 'snapshot':
        this.#events.snapshot(frame.view);
        return;
      case 'msg':
        this.#events.message(frame);
        return;
      case 'reply':
        this.#events.reply(frame);
        return;
      case 'fault':
        this.#events.fault(frame.error, frame.fatal);
        return;
      case 'stopped':
        this.#stoppedFrame?.();
        return;
      case 'stop':
        this.#events.fault(new TorusError('TORUS_PROTOCOL_INVALID', 'a worker may not send stop').toJSON(), false);
        return;
    }
  }
}
