/**
 * Bounds on what a stranger can make the API hold: open connections (total and per client address), SSE
 * clients, and the rate of expensive writes (create instance, measure links, ring bench) per client address.
 * Being at a limit is counted (`torus_limit_rejections_total{limit}` in /metrics) and logged once per episode,
 * not per request, so a flood cannot also flood the log.
 */
import type { IncomingMessage } from 'node:http';
import type { Server } from 'node:net';
import type { Socket } from 'node:net';
import { TorusError } from '../protocols/errors.js';
import { createLogger } from '../runtime/log.js';

export interface ApiLimits {
  /** Open HTTP connections at once; excess sockets are closed at once. */
  readonly maxConnections: number;
  /** Open HTTP connections at once from one client address. */
  readonly maxConnectionsPerIp: number;
  /** Open /v1/events streams at once. */
  readonly maxSseClients: number;
  /** Create / measure / bench requests per minute per client address (bursts up to this many). */
  readonly maxWriteRate: number;
  /** Headers must arrive within this (idle and slow-header sockets are closed: 408). */
  readonly headersTimeoutMs: number;
  /** The whole request (headers and body) must arrive within this; SSE responses are not limited by it. */
  readonly requestTimeoutMs: number;
}

export const DEFAULT_API_LIMITS: ApiLimits = {
  maxConnections: 512,
  maxConnectionsPerIp: 64,
  maxSseClients: 64,
  maxWriteRate: 60,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
};

export type LimitName = 'http-connections' | 'http-connections-per-ip' | 'sse-clients' | 'write-rate';

/** A quiet spell this long ends an episode: the next rejection is logged again. */
const EPISODE_MS = 60_000;
const log = createLogger({ component: 'api' });

export class LimitStats {
  readonly #rejections = new Map<LimitName, number>();
  readonly #lastAt = new Map<LimitName, number>();

  reject(limit: LimitName, detail: Record<string, unknown>): void {
    this.#rejections.set(limit, (this.#rejections.get(limit) ?? 0) + 1);
    const now = Date.now();
    const last = this.#lastAt.get(limit);
    this.#lastAt.set(limit, now);
    if (last === undefined || now - last > EPISODE_MS)
      log.warn(`at the ${limit} limit: refusing (logged once per episode; counted in /metrics)`, { limit, ...detail });
  }

  /** Rejections so far per limit (every limit listed, 0 when never hit). */
  counts(): Record<LimitName, number> {
    const names: LimitName[] = ['http-connections', 'http-connections-per-ip', 'sse-clients', 'write-rate'];
    return Object.fromEntries(names.map((n) => [n, this.#rejections.get(n) ?? 0])) as Record<LimitName, number>;
  }
}

/** Closes sockets over the total or per-address cap the moment they are accepted. */
export function guardConnections(server: Server, limits: ApiLimits, stats: LimitStats): void {
  const perIp = new Map<string, number>();
  let open = 0;
  server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress ?? '?';
    const mine = perIp.get(ip) ?? 0;
    if (open >= limits.maxConnections) {
      stats.reject('http-connections', { max: limits.maxConnections });
      socket.destroy();
      return;
    }
    if (mine >= limits.maxConnectionsPerIp) {
      stats.reject('http-connections-per-ip', { max: limits.maxConnectionsPerIp, ip });
      socket.destroy();
      return;
    }
    open++;
    perIp.set(ip, mine + 1);
    socket.once('close', () => {
      open--;
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left <= 0) perIp.delete(ip);
      else perIp.set(ip, left);
    });
  });
}

/** Counts open SSE streams; `enter` throws TORUS_LIMIT_REACHED at the cap, the returned function leaves. */
export class SseGate {
  #open = 0;
  constructor(
    readonly max: number,
    private readonly stats: LimitStats,
  ) {}

  enter(): () => void {
    if (this.#open >= this.max) {
      this.stats.reject('sse-clients', { max: this.max });
      throw new TorusError(
        'TORUS_LIMIT_REACHED',
        `this node serves at most ${this.max} event streams at once (--max-sse-clients)`,
        { limit: 'sse-clients', max: this.max },
      );
    }
    this.#open++;
    let left = false;
    return () => {
      if (!left) this.#open--;
      left = true;
    };
  }
}

/** Bucket entries kept at most (one per client address); full buckets are dropped first. */
const MAX_BUCKETS = 4_096;

/** A token bucket per client address: `perMinute` requests, refilled continuously, bursts up to `perMinute`. */
export class WriteRateLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    readonly perMinute: number,
    private readonly stats: LimitStats,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one token for the request's client; throws TORUS_RATE_LIMITED (with retryAfterS) when none is left. */
  take(req: IncomingMessage): void {
    const ip = req.socket.remoteAddress ?? '?';
    const now = this.now();
    const perMs = this.perMinute / 60_000;
    const bucket = this.#buckets.get(ip) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    this.#buckets.delete(ip); // re-insert: Map order = least recently used first
    this.#buckets.set(ip, bucket);
    this.#trim();
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return;
    }
    const retryAfterS = Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
    this.stats.reject('write-rate', { perMinute: this.perMinute, ip });
    throw new TorusError(
      'TORUS_RATE_LIMITED',
      `too many requests: at most ${this.perMinute} per minute from one client (--max-write-rate)`,
      { limit: 'write-rate', perMinute: this.perMinute, retryAfterS },
    );
  }

  #trim(): void {
    for (const id of this.#buckets.keys()) {
      if (this.#buckets.size <= MAX_BUCKETS) return;
      this.#buckets.delete(id);
    }
  }
}
