import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TorusError } from '../core/errors.js';
import { createLogger } from '../runtime/log.js';
import { DEFAULT_BODY_LIMIT_BYTES, readJsonBody, sendError, sendJson } from './http-io.js';
import type { NodeFacade } from './node-facade.js';
import { openApiDocument } from './openapi.js';
import { matchRoute, type Route, type RouteShared } from './router.js';
import { benchRoutes } from './routes/bench-routes.js';
import { clusterRoutes } from './routes/cluster-routes.js';
import { dashboardRoutes } from './routes/dashboard-routes.js';
import { eventsRoute } from './routes/events-route.js';
import { instanceRoutes } from './routes/instance-routes.js';
import { logRoutes } from './routes/log-routes.js';
import { linksRoutes } from './routes/links-routes.js';
import { metricsRoute } from './routes/metrics-route.js';

export interface ApiServerOptions {
  readonly port: number;
  readonly host?: string;
  /** The profiler's probe endpoints (GET /node_id …), tried first; returns true when it answered. */
  readonly probeHandler?: (req: IncomingMessage, res: ServerResponse, awaitingContinue?: boolean) => boolean;
  /** Extra origins allowed to call the API from a browser (the dashboard itself is same-origin). */
  readonly corsOrigins?: readonly string[];
  readonly bodyLimitBytes?: number;
  /** SSE heartbeat comment interval. */
  readonly heartbeatMs?: number;
}

export interface ApiServer {
  readonly server: Server;
  readonly host: string;
  readonly port: number;
  /** e.g. http://127.0.0.1:52515 */
  readonly url: string;
  readonly routes: readonly Route[];
  /** Ends event streams and open connections; idempotent. */
  close(): Promise<void>;
}

const log = createLogger({ component: 'api' });

/** Every route the server answers (exported for the OpenAPI completeness test). */
export function apiRoutes(): readonly Route[] {
  const openapi: Route = {
    method: 'GET',
    path: '/v1/openapi.json',
    summary: 'this API as an OpenAPI 3.1 document',
    handler: async ({ facade }) => ({ status: 200, body: openApiDocument((await facade.node()).version) }),
  };
  return [...clusterRoutes, ...linksRoutes, ...instanceRoutes, ...logRoutes, eventsRoute, ...benchRoutes, metricsRoute, openapi, ...dashboardRoutes()];
}

export async function createApiServer(facade: NodeFacade, options: ApiServerOptions): Promise<ApiServer> {
  const routes = apiRoutes();
  const closing = new AbortController();
  const shared: RouteShared = { closing: closing.signal, heartbeatMs: options.heartbeatMs ?? 15_000, benches: new Map(), broadcast: new Set() };
  const limit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const allowed = new Set(options.corsOrigins ?? []);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (options.probeHandler?.(req, res)) return;
    const url = new URL(req.url ?? '/', 'http://torus.invalid');
    const cors = corsHeaders(req, allowed);
    if (cors === 'forbidden') throw new TorusError('TORUS_API_FORBIDDEN', 'cross-origin requests are only accepted from the dashboard origin', { where: 'headers', path: 'origin' });
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET, POST, DELETE', 'access-control-allow-headers': 'content-type, last-event-id', 'access-control-max-age': '600' });
      res.end();
      return;
    }
    const match = matchRoute(routes, req.method ?? 'GET', url.pathname);
    if (match.kind === 'none') throw new TorusError('TORUS_API_NOT_FOUND', `no route ${url.pathname}`, { where: 'path', path: url.pathname });
    if (match.kind === 'method') {
      throw new TorusError('TORUS_API_METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${url.pathname}`, { allow: match.allow });
    }
    for (const [k, v] of Object.entries(cors)) res.setHeader(k, v);
    const result = await match.route.handler({ req, res, url, params: match.params, facade, shared, body: () => readJsonBody(req, limit) });
    if (result) sendJson(res, result.status, result.body, result.headers);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const allow = error instanceof TorusError && error.code === 'TORUS_API_METHOD_NOT_ALLOWED' ? (error.details.allow as string[]) : undefined;
      // 503 (no leader, shutting down) is an expected, retryable answer, not a fault worth a warning.
      if (!(error instanceof TorusError) || (error.httpStatus >= 500 && error.httpStatus !== 503)) log.warn('request failed', { method: req.method, url: req.url, error });
      sendError(res, error, allow ? { allow: allow.join(', ') } : {});
    });
  });
  // Expect: 100-continue: throughput probes decide before the body is sent (a busy sink refuses without a wasted
  // upload, src/profiler/probe-handler.ts); every other request is continued at once and handled as usual.
  server.on('checkContinue', (req, res) => {
    if (options.probeHandler?.(req, res, true)) return;
    res.writeContinue();
    server.emit('request', req, res);
  });
  // Slow-loris bounds: headers must arrive promptly; SSE responses are long-lived, so no overall request timeout.
  server.headersTimeout = 10_000;
  server.requestTimeout = 0;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    server,
    host,
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    routes,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        server.closeIdleConnections();
        // SSE streams end on `closing`; give them a tick to flush, then cut whatever is left.
        setImmediate(() => server.closeAllConnections());
      })),
  };
}

/**
 * Same-origin requests (the dashboard served from this node) and requests without Origin (CLI, curl) pass
 * without CORS headers. An allowed foreign origin gets the CORS headers; any other origin is refused, which
 * also stops a foreign page from POSTing to a node on the user's LAN.
 */
function corsHeaders(req: IncomingMessage, allowed: ReadonlySet<string>): Record<string, string> | 'forbidden' {
  const origin = req.headers.origin;
  if (origin === undefined) return {};
  let sameHost = false;
  try {
    sameHost = new URL(origin).host === req.headers.host;
  } catch {
    return 'forbidden';
  }
  if (sameHost) return {};
  if (allowed.has(origin)) return { 'access-control-allow-origin': origin, vary: 'Origin' };
  return 'forbidden';
}
