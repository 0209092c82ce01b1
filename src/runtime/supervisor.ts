/**
 * A one-for-one supervisor of actor workers: restarts a crashed worker (uncaught error, worker exit, failed
 * start, fatal fault) after an exponential backoff, gives up when the restart intensity is exceeded and
 * escalates to its parent. Messages for an actor that is restarting wait in a bounded backlog.
 */
import { ClosedResourceError, type ErrorJson } from '../protocols/errors.js';
import type { Frame } from '../protocols/mailbox.js';
import { ActorHost, type ActorSpec } from './actor-host.js';
import type { Logger } from './log.js';
import { decideRestart, DEFAULT_RESTART_POLICY, type RestartPolicy } from './restart-policy.js';

export interface SupervisorHooks {
  message(name: string, frame: Extract<Frame, { t: 'msg' }>): void;
  reply(name: string, frame: Extract<Frame, { t: 'reply' }>): void;
  snapshot(name: string, view: unknown): void;
  /** The current incarnation of `name` is gone (crash or stop): fail what waited on it. */
  down(name: string, reason: string): void;
  escalate(name: string, reason: string): void;
  /** Timestamps for restart decisions; injectable so tests can drive time. */
  now?(): number;
}

interface Child {
  readonly spec: ActorSpec;
  host: ActorHost | undefined;
  history: number[];
  restarts: number;
  lastCause: string | undefined;
  backlog: Frame[];
  restartTimer: NodeJS.Timeout | undefined;
  /** The fatal fault the current incarnation reported, if any: the best account of why it died. */
  faultCause: string | undefined;
  readyWaiters: Array<{ resolve: () => void; reject: (e: Error) => void }>;
  gaveUp: boolean;
}

const BACKLOG_LIMIT = 10_000;

export class Supervisor {
  readonly #children = new Map<string, Child>();
  /** alias → the name of the child that answers at it (ActorSpec.aliases) */
  readonly #aliases = new Map<string, string>();
  readonly #hooks: SupervisorHooks;
  readonly #policy: RestartPolicy;
  readonly #log: Logger;
  #stopping = false;

  constructor(hooks: SupervisorHooks, log: Logger, policy: RestartPolicy = DEFAULT_RESTART_POLICY) {
    this.#hooks = hooks;
    this.#log = log;
    this.#policy = policy;
  }

  get names(): string[] {
    return [...this.#children.keys()];
  }

  /** Every address a child answers at: its name, then its aliases, in start order. */
  get addresses(): string[] {
    return [...this.#children.values()].flatMap((c) => [c.spec.name, ...(c.spec.aliases ?? [])]);
  }

  /** The child's name for an address (an alias resolves to the child that answers at it). */
  resolve(address: string): string {
    return this.#aliases.get(address) ?? address;
  }

  /** Starts a child; resolves once it is ready (after restarts if it crashed), rejects if the supervisor gave up. */
  start(spec: ActorSpec): Promise<void> {
    for (const address of [spec.name, ...(spec.aliases ?? [])])
      if (this.#children.has(address) || this.#aliases.has(address))
        throw new Error(`actor ${address} is already supervised`);
    for (const alias of spec.aliases ?? []) this.#aliases.set(alias, spec.name);
    const child: Child = {
      spec,
      host: undefined,
      history: [],
      restarts: 0,
      lastCause: undefined,
      backlog: [],
      restartTimer: undefined,
      faultCause: undefined,
      readyWaiters: [],
      gaveUp: false,
    };
    this.#children.set(spec.name, child);
    const ready = new Promise<void>((resolve, reject) => child.readyWaiters.push({ resolve, reject }));
    this.#spawn(child);
    return ready;
  }

  has(name: string): boolean {
    return this.#children.has(this.resolve(name));
  }

  liveHost(name: string): ActorHost | undefined {
    const host = this.#children.get(this.resolve(name))?.host;
    return host && (host.state === 'ready' || host.state === 'starting') ? host : undefined;
  }

  /**
   * Why the actor has no incarnation now (it crashed and waits for its restart, or the supervisor gave up on it);
   * undefined while one is starting, running or stopping, and for an unknown address.
   */
  downCause(address: string): string | undefined {
    const child = this.#children.get(this.resolve(address));
    if (!child || child.host) return undefined;
    if (this.#stopping) return 'stopped';
    const cause = child.lastCause ?? 'unknown';
    return child.gaveUp ? `gave up after: ${cause}` : `restarting after: ${cause}`;
  }

  /** Delivers a frame to the actor, or keeps it until the restarting actor is back. */
  deliver(address: string, frame: Frame): void {
    const name = this.resolve(address);
    const child = this.#children.get(name);
    if (!child) throw new Error(`no actor ${name}`);
    const host = this.liveHost(name);
    if (host) return host.deliver(frame);
    if (child.gaveUp || this.#stopping) throw new ClosedResourceError(`actor ${name}`);
    if (child.backlog.length >= BACKLOG_LIMIT) throw new Error(`actor ${name} is restarting and its backlog is full`);
    child.backlog.push(frame);
  }

  stats(): Record<string, { restarts: number; state: string; lastCause?: string; threadId?: number }> {
    const out: Record<string, { restarts: number; state: string; lastCause?: string; threadId?: number }> = {};
    for (const [name, child] of this.#children) {
      out[name] = {
        restarts: child.restarts,
        state: child.gaveUp ? 'gave-up' : (child.host?.state ?? 'restarting'),
        ...(child.lastCause ? { lastCause: child.lastCause } : {}),
        ...(child.host && child.host.state !== 'exited' ? { threadId: child.host.threadId } : {}),
      };
    }
    return out;
  }

  /** Live worker threads (for leak checks). */
  liveWorkers(): number {
    let count = 0;
    for (const child of this.#children.values()) if (child.host && child.host.state !== 'exited') count++;
    return count;
  }

  /** Stops children in the given order (others afterwards, newest first). Idempotent. */
  async stopAll(order: readonly string[], deadlineMs: number): Promise<void> {
    this.#stopping = true;
    const rest = [...this.#children.keys()].filter((n) => !order.includes(n)).reverse();
    for (const name of [...order.filter((n) => this.#children.has(n)), ...rest]) {
      const child = this.#children.get(name)!;
      if (child.restartTimer) clearTimeout(child.restartTimer);
      child.restartTimer = undefined;
      child.backlog = [];
      for (const w of child.readyWaiters.splice(0)) w.reject(new Error(`actor ${name} stopped before it was ready`));
      await child.host?.stop(deadlineMs);
    }
  }

  async killAll(): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      [...this.#children.values()].map(async (child) => {
        if (child.restartTimer) clearTimeout(child.restartTimer);
        await child.host?.kill();
      }),
    );
  }

  #spawn(child: Child): void {
    const name = child.spec.name;
    let host: ActorHost;
    try {
      host = new ActorHost(child.spec, {
        ready: () => {
          if (child.host !== host) return;
          const backlog = child.backlog.splice(0);
          for (const frame of backlog) host.deliver(frame);
          for (const w of child.readyWaiters.splice(0)) w.resolve();
        },
        snapshot: (view) => this.#hooks.snapshot(name, view),
        message: (frame) => this.#hooks.message(name, frame),
        reply: (frame) => this.#hooks.reply(name, frame),
        fault: (error, fatal) => this.#onFault(child, host, error, fatal),
        exit: (code, expected, error) => this.#onExit(child, host, code, expected, error),
      });
    } catch (error) {
      this.#crashed(child, `failed to start: ${(error as Error).message}`);
      return;
    }
    child.host = host;
  }

  #onFault(child: Child, host: ActorHost, error: ErrorJson, fatal: boolean): void {
    if (!fatal) {
      this.#log.warn('actor reported a fault', { actor: child.spec.name, code: error.code, error: error.message });
      return;
    }
    // The actor cannot go on: end this incarnation; its exit triggers the restart decision.
    child.faultCause = `fatal fault: ${error.message}`;
    void host.kill(true);
  }

  #onExit(child: Child, host: ActorHost, code: number, expected: boolean, error?: Error): void {
    if (child.host !== host) return;
    child.host = undefined;
    const cause = child.faultCause ?? (error ? `${error.name}: ${error.message}` : `worker exited with code ${code}`);
    child.faultCause = undefined;
    if (!expected && !this.#stopping) child.lastCause = cause; // downCause says it from the down hook on
    this.#hooks.down(child.spec.name, expected ? 'stopped' : cause);
    if (expected || this.#stopping) return;
    this.#crashed(child, cause);
  }

  #crashed(child: Child, cause: string): void {
    const name = child.spec.name;
    child.lastCause = cause;
    const decision = decideRestart(child.history, this.#hooks.now?.() ?? Date.now(), this.#policy);
    child.history = [...decision.history];
    if (decision.action === 'escalate') {
      child.gaveUp = true;
      child.backlog = [];
      const reason = `actor ${name} keeps crashing (${decision.reason}); last cause: ${cause}`;
      this.#log.error('giving up on actor', { actor: name, reason });
      for (const w of child.readyWaiters.splice(0)) w.reject(new Error(reason));
      this.#hooks.escalate(name, reason);
      return;
    }
    child.restarts++;
    this.#log.warn('restarting actor', { actor: name, cause, attempt: decision.attempt, delayMs: decision.delayMs });
    child.restartTimer = setTimeout(() => {
      child.restartTimer = undefined;
      if (!this.#stopping) this.#spawn(child);
    }, decision.delayMs);
  }
}
