import type { IncomingMessage, ServerResponse } from 'node:http';
import { TorusError } from '../protocols/errors.js';
import type { ApiAuth } from './auth.js';
import type { LimitStats, SseGate } from './limits.js';
import type { NodeFacade } from './node-facade.js';

/**
 * A route table with `:param` segments. Hand-written (≈60 lines) instead of a web framework because the API
 * has 20 fixed routes and the project adds no dependencies; it also gives us 404 vs 405 (with `Allow`)
 * exactly, which the contract tests pin.
 */
export type Method = 'GET' | 'POST' | 'DELETE';

export interface RouteContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
  readonly facade: NodeFacade;
  /** Reads, size-limits and parses the JSON body (TORUS_API_BODY_TOO_LARGE / TORUS_API_VALIDATION). */
  readonly body: () => Promise<unknown>;
  /** Server-wide resources handlers share (bench runs, SSE registry). */
  readonly shared: RouteShared;
}

export interface RouteShared {
  /** Aborted when the server closes: long-lived handlers (SSE) end on it. */
  readonly closing: AbortSignal;
  readonly heartbeatMs: number;
  readonly benches: Map<string, unknown>;
  /** Fan-out for non-indexed stream events (bench progress) to every open SSE client. */
  readonly broadcast: Set<(name: string, data: unknown) => void>;
  /** Who is let in (bearer token, dashboard sessions, or open mode). */
  readonly auth: ApiAuth;
  /** The cap on open event streams. */
  readonly sse: SseGate;
  /** Rejections at each limit, for /metrics. */
  readonly limitStats: LimitStats;
}

/** A JSON answer; handlers that stream (SSE) or send text write `res` themselves and return undefined. */
export interface JsonResult {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

export interface Route {
  readonly method: Method;
  /** e.g. `/v1/instances/:id` */
  readonly path: string;
  readonly summary: string;
  /** `public`: answered without credentials (GET /node_id, the login page; `/` shows the login form itself). */
  readonly access?: 'public';
  /** `peer`: another node of the cluster may call it with a peer proof instead of the token (a followed log). */
  readonly peer?: true;
  /** Expensive writes (create, measure, bench): rate-limited per client address (--max-write-rate). */
  readonly writeRate?: true;
  readonly handler: (ctx: RouteContext) => Promise<JsonResult | undefined>;
}

export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method'; allow: readonly string[] }
  | { kind: 'none' };

export function matchRoute(routes: readonly Route[], method: string, pathname: string): RouteMatch {
  const allow = new Set<string>();
  for (const route of routes) {
    const params = matchPath(route.path, pathname);
    if (!params) continue;
    if (route.method === method || (method === 'HEAD' && route.method === 'GET'))
      return { kind: 'found', route, params };
    allow.add(route.method);
  }
  return allow.size > 0 ? { kind: 'method', allow: [...allow] } : { kind: 'none' };
}

function matchPath(pattern: string, pathname: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = pathname.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? '';
    const g = got[i] ?? '';
    if (w.startsWith(':')) {
      if (g === '') return undefined;
      try {
        params[w.slice(1)] = decodeURIComponent(g);
      } catch {
        throw new TorusError('TORUS_API_VALIDATION', `params ${w.slice(1)}: malformed percent-encoding`, {
          where: 'params',
          path: w.slice(1),
        });
      }
    } else if (w !== g) return undefined;
  }
  return params;
}
