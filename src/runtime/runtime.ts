/**
 * The actor runtime of one node: a root supervisor over actor workers, host services, and one relay through
 * which every message passes (local actor, host service, or `<nodeId>/<name>` on another node). The relay is
 * where the shutdown rule lives: a send on an already-closed channel during shutdown is expected and swallowed;
 * the same failure in normal running is reported as a fault.
 */
import { asTorusError, ClosedResourceError, errorFromJson, TorusError } from '../protocols/errors.js';
import type { Body, Frame } from '../protocols/mailbox.js';
import type { ActorSpec } from './actor-host.js';
import { CpuPool } from './cpu-pool.js';
import { createLogger, type Logger } from './log.js';
import { PendingRequests } from './pending-requests.js';
import { DEFAULT_RESTART_POLICY, type RestartPolicy } from './restart-policy.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './serve-actor.js';
import { Supervisor } from './supervisor.js';

export type ServiceHandler = (body: Body, from: string) => unknown;

/** Carries messages to actors on other nodes (installed by the cluster layer). */
export interface RemoteTransport {
  send(nodeId: string, to: string, from: string, body: Body): void;
  request(nodeId: string, to: string, from: string, body: Body, timeoutMs: number): Promise<unknown>;
}

export interface RuntimeOptions {
  readonly nodeId?: string;
  readonly restartPolicy?: RestartPolicy;
  readonly log?: Logger;
  /** Called when a supervised actor exceeded its restart intensity; the root's parent (the node) shuts down. */
  readonly onEscalate?: (actor: string, reason: string) => void;
  readonly now?: () => number;
}

export interface RelayStats {
  delivered: number;
  swallowedDuringShutdown: number;
  faults: number;
}

export class Runtime {
  readonly nodeId: string;
  readonly log: Logger;
  readonly pool = new CpuPool();
  readonly relayStats: RelayStats = { delivered: 0, swallowedDuringShutdown: 0, faults: 0 };
  readonly #supervisor: Supervisor;
  readonly #services = new Map<string, ServiceHandler>();
  readonly #snapshots = new Map<string, unknown>();
  readonly #subscribers = new Map<string, Set<(view: unknown) => void>>();
  /** Requests from the host to actors, by correlation id; meta = the target actor. */
  readonly #pending = new PendingRequests<string>();
  readonly #faultListeners = new Set<(actor: string, error: TorusError) => void>();
  readonly #downListeners = new Set<(actor: string, reason: string) => void>();
  #remote: RemoteTransport | undefined;
  #nextCorr = 1;
  #shuttingDown = false;
  #shutdown: Promise<void> | undefined;

  constructor(options: RuntimeOptions = {}) {
    this.nodeId = options.nodeId ?? 'local';
    this.log = options.log ?? createLogger({ component: 'runtime' });
    const onEscalate =
      options.onEscalate ?? ((actor: string, reason: string) => this.log.error('actor escalated', { actor, reason }));
    this.#supervisor = new Supervisor(
      {
        message: (name, frame) => this.#fromWorker(name, frame),
        reply: (_name, frame) => this.#settle(frame),
        snapshot: (name, view) => this.#publish(name, view),
        down: (name, reason) => this.#down(name, reason),
        escalate: onEscalate,
        ...(options.now ? { now: options.now } : {}),
      },
      this.log,
      options.restartPolicy ?? DEFAULT_RESTART_POLICY,
    );
    this.register('cpu-pool', (body) => this.pool.serve(body));
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Starts an actor under the root supervisor; resolves when it is ready. */
  supervise(spec: ActorSpec): Promise<void> {
    if (this.#shuttingDown) return Promise.reject(new TorusError('TORUS_SHUTTING_DOWN', 'the node is shutting down'));
    for (const address of [spec.name, ...(spec.aliases ?? [])])
      if (this.#services.has(address)) throw new Error(`${address} is already a host service`);
    return this.#supervisor.start(spec);
  }

  /** A host-side service reachable at `name` (requests get the handler's result as the reply). */
  register(name: string, handler: ServiceHandler): void {
    if (this.#supervisor.has(name)) throw new Error(`${name} is already an actor`);
    this.#services.set(name, handler);
  }

  setRemoteTransport(transport: RemoteTransport | undefined): void {
    this.#remote = transport;
  }

  onFault(listener: (actor: string, error: TorusError) => void): () => void {
    this.#faultListeners.add(listener);
    return () => this.#faultListeners.delete(listener);
  }

  /**
   * Told when the runtime has seen an actor's incarnation end (`reason`: `stopped`, or the crash), after the
   * requests it held were failed and before any restart: from then on `downCause` says why until it is back.
   */
  onDown(listener: (actor: string, reason: string) => void): () => void {
    this.#downListeners.add(listener);
    return () => this.#downListeners.delete(listener);
  }

  /** Why the actor at `address` has no running incarnation (restarting, or given up); undefined when it has one. */
  downCause(address: string): string | undefined {
    return this.#supervisor.downCause(address);
  }

  /** Fire-and-forget delivery through the relay. */
  send(to: string, body: Body, from = 'host'): void {
    this.#relay(from, to, body);
  }

  /** Request/reply through the relay; rejects with TORUS_ACTOR_TIMEOUT when no reply comes in time. */
  request<T = unknown>(to: string, body: Body, options: { timeoutMs?: number; from?: string } = {}): Promise<T> {
    const from = options.from ?? 'host';
    const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    if (this.#shuttingDown) return Promise.reject(new TorusError('TORUS_SHUTTING_DOWN', 'the node is shutting down'));
    const { nodeId, name } = this.#parse(to);
    if (nodeId !== this.nodeId) {
      if (!this.#remote)
        return Promise.reject(new TorusError('TORUS_ACTOR_UNKNOWN', `no route to node ${nodeId}`, { to }));
      return this.#remote.request(nodeId, name, from, body, timeoutMs) as Promise<T>;
    }
    const service = this.#services.get(name);
    if (service) return Promise.resolve().then(() => service(body, from)) as Promise<T>;
    if (!this.#supervisor.has(name))
      return Promise.reject(new TorusError('TORUS_ACTOR_UNKNOWN', `no actor or service named ${name}`, { to }));
    // Pending requests are kept by the child that answers, so its going down fails them whatever address was used.
    const child = this.#supervisor.resolve(name);
    return new Promise<T>((resolve, reject) => {
      const corr = this.#nextCorr++;
      this.#pending.add(corr, timeoutMs, {
        resolve: resolve as (v: unknown) => void,
        reject,
        timeoutError: () =>
          new TorusError('TORUS_ACTOR_TIMEOUT', `request ${body.type} to ${to} timed out after ${timeoutMs} ms`, {
            to,
            type: body.type,
            timeoutMs,
          }),
        meta: child,
      });
      try {
        this.#supervisor.deliver(name, { t: 'msg', from, to: name, body, corr });
        this.relayStats.delivered++;
      } catch (error) {
        this.#pending.take(corr);
        reject(this.#closedError(name, error));
      }
    });
  }

  /** The last snapshot view an actor pushed. */
  snapshot(address: string): unknown {
    return this.#snapshots.get(this.#supervisor.resolve(address));
  }

  subscribe(address: string, listener: (view: unknown) => void): () => void {
    const name = this.#supervisor.resolve(address);
    let set = this.#subscribers.get(name);
    if (!set) this.#subscribers.set(name, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Every address an actor answers at (names and aliases), in start order. */
  actors(): string[] {
    return this.#supervisor.addresses;
  }

  stats(): ReturnType<Supervisor['stats']> {
    return this.#supervisor.stats();
  }

  liveWorkers(): number {
    return this.#supervisor.liveWorkers();
  }

  /**
   * Ordered, idempotent shutdown: stop accepting work, stop actors in `order` (each finishes its current
   * message and cleans up, or is terminated at the deadline), fail what still waits, close the pool.
   */
  shutdown(options: { order?: readonly string[]; deadlineMs?: number } = {}): Promise<void> {
    this.#shutdown ??= (async () => {
      this.#shuttingDown = true;
      await this.#supervisor.stopAll(options.order ?? [], options.deadlineMs ?? 5_000);
      this.#pending.clear(() => new TorusError('TORUS_SHUTTING_DOWN', 'the node is shutting down'));
      await this.pool.close();
    })();
    return this.#shutdown;
  }

  /** Immediate stop (a second signal): terminate every worker now. */
  async kill(): Promise<void> {
    this.#shuttingDown = true;
    await this.#supervisor.killAll();
    await this.pool.close();
  }

  /** Test hook: posts raw bytes to an actor's worker, bypassing the codec. */
  postRaw(name: string, value: unknown): void {
    this.#supervisor.liveHost(name)?.postRaw(value);
  }

  #parse(address: string): { nodeId: string; name: string } {
    const slash = address.indexOf('/');
    return slash < 0
      ? { nodeId: this.nodeId, name: address }
      : { nodeId: address.slice(0, slash), name: address.slice(slash + 1) };
  }

  /** The one relay: every fire-and-forget message passes here. */
  #relay(from: string, to: string, body: Body): void {
    const { nodeId, name } = this.#parse(to);
    try {
      if (nodeId !== this.nodeId) {
        if (!this.#remote) throw new TorusError('TORUS_ACTOR_UNKNOWN', `no route to node ${nodeId}`, { to });
        this.#remote.send(nodeId, name, from, body);
      } else {
        const service = this.#services.get(name);
        if (service) {
          void Promise.resolve()
            .then(() => service(body, from))
            .catch((error: unknown) => this.#fault(name, asTorusError(error)));
        } else if (this.#supervisor.has(name)) {
          this.#supervisor.deliver(name, { t: 'msg', from, to: name, body });
        } else {
          throw new TorusError('TORUS_ACTOR_UNKNOWN', `no actor or service named ${name}`, { to, from });
        }
      }
      this.relayStats.delivered++;
    } catch (error) {
      const closed = this.#closedError(name, error);
      if (this.#shuttingDown && closed.code === 'TORUS_CHANNEL_CLOSED') {
        this.relayStats.swallowedDuringShutdown++;
        return;
      }
      this.#fault(from, closed);
    }
  }

  #closedError(name: string, error: unknown): TorusError {
    if (error instanceof ClosedResourceError || error instanceof TorusError) return error;
    return new ClosedResourceError(`actor ${name}`, { cause: error });
  }

  #fault(actor: string, error: TorusError): void {
    this.relayStats.faults++;
    this.log.warn('delivery failed', { actor, code: error.code, error: error.message });
    for (const listener of this.#faultListeners) listener(actor, error);
  }

  #fromWorker(name: string, frame: Extract<Frame, { t: 'msg' }>): void {
    if (frame.from !== name) {
      this.#fault(name, new TorusError('TORUS_PROTOCOL_INVALID', `actor ${name} sent as ${frame.from}`));
      return;
    }
    if (frame.corr === undefined) return this.#relay(name, frame.to, frame.body);
    const corr = frame.corr;
    const answer = (reply: Frame): void => {
      try {
        this.#supervisor.deliver(name, reply);
      } catch {
        // the requester restarted or stopped meanwhile: nobody waits for this reply any more
      }
    };
    this.request(frame.to, frame.body, { from: name }).then(
      (body) => answer({ t: 'reply', corr, ok: true, body: body ?? null }),
      (error: unknown) => answer({ t: 'reply', corr, ok: false, error: asTorusError(error).toJSON() }),
    );
  }

  #settle(frame: Extract<Frame, { t: 'reply' }>): void {
    const waiter = this.#pending.take(frame.corr);
    if (!waiter) return;
    if (frame.ok) waiter.resolve(frame.body);
    else waiter.reject(errorFromJson(frame.error));
  }

  #down(name: string, reason: string): void {
    this.#failPendingFor(name, reason);
    for (const listener of this.#downListeners) {
      try {
        listener(name, reason);
      } catch (error) {
        this.log.warn('down listener threw', { actor: name, error });
      }
    }
  }

  #failPendingFor(name: string, reason: string): void {
    this.#pending.rejectWhere(
      (target) => target === name,
      () =>
        new TorusError(
          this.#shuttingDown ? 'TORUS_SHUTTING_DOWN' : 'TORUS_ACTOR_FAILED',
          `actor ${name} went down: ${reason}`,
          { actor: name },
        ),
    );
  }

  #publish(name: string, view: unknown): void {
    this.#snapshots.set(name, view);
    for (const listener of this.#subscribers.get(name) ?? []) {
      try {
        listener(view);
      } catch (error) {
        this.log.warn('snapshot subscriber threw', { actor: name, error });
      }
    }
  }
}
