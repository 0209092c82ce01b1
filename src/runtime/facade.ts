/**
 * The embedding facade: typed handles per actor (snapshot, send, subscribe, stop), served over comlink so a
 * program can drive a node running in another thread (or the same one) through a MessagePort.
 *
 *   // where the node runs:  exposeRuntime(runtime, nodeEndpoint(port))
 *   // in the embedder:      const node = connectRuntime(nodeEndpoint(otherPort));
 *   //                       const keeper = node.actor('topology-keeper'); await keeper.snapshot();
 */
import * as Comlink from 'comlink';
import { TorusError } from '../protocols/errors.js';
import type { Body } from '../protocols/mailbox.js';
import type { Runtime } from './runtime.js';

/** What a handle can do to one actor. */
export interface ActorHandle<TView = unknown> {
  snapshot(): Promise<TView>;
  send(body: Body): Promise<void>;
  request<T = unknown>(body: Body, timeoutMs?: number): Promise<T>;
  /** Calls `listener` with each new snapshot view; resolves to an unsubscribe function. */
  subscribe(listener: (view: TView) => void): Promise<() => Promise<void>>;
  stop(): Promise<void>;
}

/** The object exposed over comlink; every method takes the actor name first. */
export interface RuntimeApi {
  actors(): string[];
  snapshot(name: string): Promise<unknown>;
  send(name: string, body: Body): void;
  request(name: string, body: Body, timeoutMs?: number): Promise<unknown>;
  subscribe(name: string, listener: (view: unknown) => void): (() => void) & Comlink.ProxyMarked;
  stop(): Promise<void>;
}

export function runtimeApi(runtime: Runtime, stop: () => Promise<void> = () => runtime.shutdown()): RuntimeApi {
  return {
    actors: () => runtime.actors(),
    snapshot: (name) => runtime.request(name, { type: 'snapshot' }),
    send: (name, body) => runtime.send(name, body, 'embedder'),
    request: (name, body, timeoutMs) =>
      runtime.request(name, body, { from: 'embedder', ...(timeoutMs ? { timeoutMs } : {}) }),
    subscribe: (name, listener) => {
      const unsubscribe = runtime.subscribe(name, listener);
      return Comlink.proxy(() => {
        unsubscribe();
        // The listener came over comlink as a proxy holding a MessagePort open (both ends, and the embedder's
        // event loop with them) until garbage collection: release it with the subscription.
        (listener as Partial<Comlink.Remote<unknown>>)[Comlink.releaseProxy]?.();
      });
    },
    stop,
  };
}

export function exposeRuntime(runtime: Runtime, endpoint: Comlink.Endpoint, stop?: () => Promise<void>): void {
  Comlink.expose(runtimeApi(runtime, stop), endpoint);
}

export interface RemoteNode {
  actors(): Promise<string[]>;
  actor<TView = unknown>(name: string): ActorHandle<TView>;
  /** Stops the node (its whole runtime). */
  stop(): Promise<void>;
  /** Rejects every call still waiting (use when the node's thread died: comlink would wait forever). */
  abandon(reason: string): void;
  release(): void;
}

/**
 * Wraps a comlink endpoint into typed actor handles. comlink never settles a call whose peer died
 * (upstream issues #428, #601), so every call also races the `abandon` signal.
 */
export function connectRuntime(endpoint: Comlink.Endpoint): RemoteNode {
  const remote = Comlink.wrap<RuntimeApi>(endpoint);
  let abandoned: TorusError | undefined;
  const waiters = new Set<(error: TorusError) => void>();
  const guard = <T>(call: () => Promise<T>): Promise<T> => {
    if (abandoned) return Promise.reject(abandoned);
    return new Promise<T>((resolve, reject) => {
      const onAbandon = (error: TorusError): void => reject(error);
      waiters.add(onAbandon);
      call()
        .then(resolve, reject)
        .finally(() => waiters.delete(onAbandon));
    });
  };
  return {
    actors: () => guard(() => remote.actors()),
    actor: <TView>(name: string): ActorHandle<TView> => ({
      snapshot: () => guard(() => remote.snapshot(name) as Promise<TView>),
      send: (body) => guard(() => remote.send(name, body)),
      request: <T>(body: Body, timeoutMs?: number) => guard(() => remote.request(name, body, timeoutMs) as Promise<T>),
      subscribe: async (listener) => {
        const unsubscribe = await guard(() =>
          remote.subscribe(name, Comlink.proxy(listener as (view: unknown) => void)),
        );
        return async () => {
          await unsubscribe();
          unsubscribe[Comlink.releaseProxy]();
        };
      },
      stop: () => guard(() => remote.stop()),
    }),
    stop: () => guard(() => remote.stop()),
    abandon: (reason) => {
      abandoned = new TorusError('TORUS_ACTOR_STOPPED', reason);
      for (const w of waiters) w(abandoned);
      waiters.clear();
    },
    release: () => remote[Comlink.releaseProxy](),
  };
}
