/**
 * The worker-thread side of an actor: runs an XState machine with `createActor`, decodes and validates every
 * incoming frame, answers requests, pushes snapshot views, and reports failures to its supervisor as frames
 * (no exception crosses the thread boundary). `worker.ts` files call `serveActor` and contain only shell wiring.
 */
import { startIdleCollection } from './idle-collection.js';
import { threadHeap, watchLiveHeap } from './thread-heap.js';
import { parentPort, workerData } from 'node:worker_threads';
import {
  createActor,
  type Actor,
  type AnyStateMachine,
  type EventFrom,
  type InputFrom,
  type SnapshotFrom,
} from 'xstate';
import { asTorusError, errorFromJson, TorusError, ValidationError } from '../protocols/errors.js';
import type { Body, Frame } from '../protocols/mailbox.js';
import { FramePort, type PostTarget } from './frame-port.js';
import { createLogger, type Logger } from './log.js';
import { PendingRequests } from './pending-requests.js';

export interface RequestOptions {
  readonly timeoutMs?: number;
}

export interface ActorContext<TMachine extends AnyStateMachine, TOptions> {
  readonly name: string;
  readonly options: TOptions;
  readonly actor: Actor<TMachine>;
  readonly log: Logger;
  /** True once the supervisor asked this actor to stop; sends may then fail and are swallowed. */
  readonly stopping: boolean;
  send(to: string, body: Body): void;
  request<T = unknown>(to: string, body: Body, options?: RequestOptions): Promise<T>;
}

export type RequestHandler<TMachine extends AnyStateMachine, TOptions> = (
  body: Body,
  ctx: ActorContext<TMachine, TOptions>,
) => unknown;

export interface ActorDefinition<TMachine extends AnyStateMachine, TOptions = Record<string, unknown>> {
  readonly name: string;
  readonly machine: TMachine;
  readonly input?: (options: TOptions) => InputFrom<TMachine>;
  /** Validates an incoming event; throw ValidationError for bad input (the actor keeps running). */
  readonly decodeEvent: (body: Body) => EventFrom<TMachine>;
  /** A plain, serialisable view of a snapshot (default: value and context). */
  readonly view?: (snapshot: SnapshotFrom<TMachine>) => unknown;
  readonly requests?: Readonly<Record<string, RequestHandler<TMachine, TOptions>>>;
  /** Shell wiring; may return a cleanup that runs (awaited, within the stop deadline) when the actor stops. */
  readonly setup?: (
    ctx: ActorContext<TMachine, TOptions>,
  ) => void | (() => void | Promise<void>) | Promise<void | (() => void | Promise<void>)>;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

const defaultView = (snapshot: { value: unknown; context: unknown }): unknown => ({
  value: snapshot.value,
  context: snapshot.context,
});

export function serveActor<TMachine extends AnyStateMachine, TOptions = Record<string, unknown>>(
  definition: ActorDefinition<TMachine, TOptions>,
): void {
  if (!parentPort) throw new Error(`serveActor(${definition.name}) must run inside a worker thread`);
  const data = (workerData ?? {}) as { name?: string; options: TOptions; idleCollectionMs?: number };
  const { options } = data;
  // The address the host started this worker under (its spec name) is the one its frames carry.
  const name = data.name ?? definition.name;
  const log = createLogger({ actor: name });
  watchLiveHeap();
  startIdleCollection(data.idleCollectionMs ?? 0);
  const pending = new PendingRequests();
  let nextCorr = 1;
  let stopping = false;
  let cleanup: (() => void | Promise<void>) | undefined;
  let lastViewJson = '';
  /** Request handlers still running: stop lets them finish (within the deadline) before cleaning up. */
  const inflight = new Set<Promise<void>>();

  const port = new FramePort(
    parentPort as unknown as PostTarget,
    {
      onFrame: (frame) => onFrame(frame),
      onReject: (error) => {
        log.warn('rejected frame', { error });
        report(false, error);
      },
    },
    `${name} mailbox`,
  );

  const post = (frame: Frame): void => {
    try {
      port.send(frame);
    } catch (error) {
      if (!stopping) throw error; // shutdown races are expected: the host closed first
    }
  };
  const report = (fatal: boolean, error: unknown): void =>
    post({ t: 'fault', fatal, error: asTorusError(error).toJSON() });

  // The machine type is generic here, so xstate cannot tell whether `input` is required: widen once.
  const create = createActor as (machine: AnyStateMachine, options?: { input?: unknown }) => Actor<TMachine>;
  const actor = create(definition.machine, definition.input ? { input: definition.input(options) } : {});
  const viewOf = (snapshot: SnapshotFrom<TMachine>): unknown =>
    (definition.view ?? (defaultView as unknown as (s: SnapshotFrom<TMachine>) => unknown))(snapshot);

  const ctx: ActorContext<TMachine, TOptions> = {
    name,
    options,
    actor,
    log,
    get stopping() {
      return stopping;
    },
    send: (to, body) => post({ t: 'msg', from: name, to, body }),
    request: <T>(to: string, body: Body, requestOptions: RequestOptions = {}) =>
      new Promise<T>((resolve, reject) => {
        const corr = nextCorr++;
        const timeoutMs = requestOptions.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
        pending.add(corr, timeoutMs, {
          resolve: resolve as (v: unknown) => void,
          reject,
          timeoutError: () =>
            new TorusError('TORUS_ACTOR_TIMEOUT', `request ${body.type} to ${to} timed out after ${timeoutMs} ms`, {
              to,
              type: body.type,
              timeoutMs,
            }),
          meta: undefined,
        });
        try {
          port.send({ t: 'msg', from: name, to, body, corr });
        } catch (error) {
          pending.take(corr);
          reject(error);
        }
      }),
  };

  actor.subscribe({
    next: (snapshot) => {
      const view = viewOf(snapshot as SnapshotFrom<TMachine>);
      const json = JSON.stringify(view);
      if (json === lastViewJson) return;
      lastViewJson = json;
      try {
        post({ t: 'snapshot', view });
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        log.warn('snapshot view cannot be encoded', { error });
        report(false, error);
      }
    },
    // An error inside the machine stops it: the supervisor must restart the worker.
    error: (error) => report(true, error),
  });

  const replyOk = (corr: number, result: unknown): void => {
    try {
      post({ t: 'reply', corr, ok: true, body: result ?? null });
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      replyError(corr, error); // the result cannot be encoded: the requester gets that error, not silence
    }
  };
  const replyError = (corr: number, error: unknown): void =>
    post({ t: 'reply', corr, ok: false, error: asTorusError(error).toJSON() });

  /**
   * Answers a request. A handler that returns a plain value is answered at once (no promise per request: that
   * showed in the round-trip benchmark); one that returns a promise is tracked so stop can let it finish.
   */
  function serveRequest(frame: Extract<Frame, { t: 'msg' }>, corr: number): void {
    let result: unknown;
    try {
      if (frame.body.type === 'snapshot') result = viewOf(actor.getSnapshot() as SnapshotFrom<TMachine>);
      else if (frame.body.type === 'heap')
        result = threadHeap(); // every actor answers it (metrics, soak benchmark)
      else {
        const handler = definition.requests?.[frame.body.type];
        if (!handler)
          throw new TorusError('TORUS_PROTOCOL_INVALID', `${name} has no request ${JSON.stringify(frame.body.type)}`, {
            type: frame.body.type,
          });
        result = handler(frame.body, ctx);
      }
    } catch (error) {
      replyError(corr, error);
      return;
    }
    if (!isThenable(result)) {
      replyOk(corr, result);
      return;
    }
    const running: Promise<void> = Promise.resolve(result)
      .then(
        (value) => replyOk(corr, value),
        (error: unknown) => replyError(corr, error),
      )
      .catch((error: unknown) => log.warn('reply could not be sent', { corr, error })) // never an unhandled rejection
      .finally(() => inflight.delete(running));
    inflight.add(running);
  }

  async function stop(deadlineMs: number): Promise<void> {
    if (stopping) return;
    stopping = true;
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, deadlineMs).unref());
    try {
      if (inflight.size > 0) await Promise.race([Promise.allSettled([...inflight]), deadline]);
      if (cleanup) await Promise.race([Promise.resolve(cleanup()), deadline]);
    } catch (error) {
      log.warn('cleanup failed during stop', { error });
    }
    actor.stop();
    pending.clear(() => new TorusError('TORUS_SHUTTING_DOWN', `${name} is stopping`));
    post({ t: 'stopped' });
    port.close();
    parentPort?.close();
  }

  function deliverEvent(frame: Extract<Frame, { t: 'msg' }>): void {
    try {
      actor.send(definition.decodeEvent(frame.body));
    } catch (error) {
      log.warn('rejected event', { from: frame.from, type: frame.body.type, error });
      report(false, error);
    }
  }

  /** Every incoming frame, synchronously: events and plain requests take no promise per message (measured). */
  function onFrame(frame: Frame): void {
    switch (frame.t) {
      case 'msg':
        return frame.corr === undefined ? deliverEvent(frame) : serveRequest(frame, frame.corr);
      case 'reply': {
        const waiter = pending.take(frame.corr);
        if (!waiter) return; // a late reply to a request that already timed out
        if (frame.ok) waiter.resolve(frame.body);
        else waiter.reject(errorFromJson(frame.error));
        return;
      }
      case 'stop':
        void stop(frame.deadlineMs);
        return;
      default:
        report(false, new TorusError('TORUS_PROTOCOL_INVALID', `unexpected frame ${frame.t} in ${name}`));
    }
  }

  void (async () => {
    try {
      actor.start();
      const result = definition.setup ? await definition.setup(ctx) : undefined;
      if (typeof result === 'function') cleanup = result;
      post({ t: 'ready' });
    } catch (error) {
      // A failed start is a crash: the supervisor counts it toward the restart intensity.
      report(true, error);
    }
  })();
}
