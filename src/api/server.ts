import { listenApi } from './listen.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { TorusError } from '../protocols/errors.js';
import { createLogger } from '../runtime/log.js';
import { ApiAuth, type ApiAuthConfig } from './auth.js';
import { HostPolicy } from './host-check.js';
import { redactEnv } from '../http/redact.js';
import { httpsRedirect, plainFromAnotherHost, tlsRequired } from './plain-http-policy.js';
import { frontServer } from './tls/same-port.js';
import { DEFAULT_BODY_LIMIT_BYTES, readJsonBody, sendError, sendJson } from '../http/http-io.js';
import {
  DEFAULT_API_LIMITS,
  guardConnections,
  LimitStats,
  SseGate,
  WriteRateLimiter,
  type ApiLimits,
} from './limits.js';
import type { NodeFacade } from './node-facade.js';
import { openApiDocument } from './openapi.js';
import { matchRoute, type Route, type RouteShared } from './router.js';
import { benchRoutes } from './routes/bench-routes.js';
import { clusterRoutes } from './routes/cluster-routes.js';
import { dashboardRoutes } from './routes/dashboard-routes.js';
import { eventsRoute } from './routes/events-route.js';
import { instanceRoutes } from './routes/instance-routes.js';
import { logRoutes } from './routes/log-routes.js';
import { loginRoutes } from './routes/login-routes.js';
import { linksRoutes } from './routes/links-routes.js';
import { metricsRoute } from './routes/metrics-route.js';
import { memberRoutes } from './routes/member-routes.js';
import { calibrationRoutes } from './routes/calibration-routes.js';
import { artifactRoutes } from './routes/artifact-routes.js';

export interface ApiServerOptions {
  readonly port: number;
  readonly host?: string;
  /** Who may call the API: the bearer token every route but GET /node_id needs, or open (--insecure-open). */
  readonly auth: ApiAuthConfig;
  /** The profiler's probe endpoints (GET /node_id …), tried after the Host/Origin checks; true when it answered. */
  readonly probeHandler?: (req: IncomingMessage, res: ServerResponse, awaitingContinue?: boolean) => boolean;
  /** Extra origins allowed to call the API from a browser (the dashboard itself is same-origin). */
  readonly corsOrigins?: readonly string[];
  /** Host names accepted besides this node's addresses and localhost (--api-allowed-hosts). */
  readonly allowedHosts?: readonly string[];
  /** For tests: the machine's addresses as the Host check sees them (default os.networkInterfaces()). */
  readonly interfaceAddresses?: () => readonly string[];
  readonly limits?: Partial<ApiLimits>;
  readonly bodyLimitBytes?: number;
  /** SSE heartbeat comment interval. */
  readonly heartbeatMs?: number;
  /**
   * The node's certificate: the API then speaks TLS and plain HTTP on the same port (tls/same-port.ts), and plain
   * HTTP from another machine carries no credential (plain-http-policy.ts). Absent: plain HTTP only (tests).
   */
  readonly tls?: { readonly cert: string; readonly key: string; readonly fingerprint: string } | undefined;
}

export interface ApiServer {
  readonly server: Server;
  readonly host: string;
  readonly port: number;
  /** e.g. http://127.0.0.1:52515 (plain: the loopback URL the local CLI uses) */
  readonly url: string;
  /** e.g. https://127.0.0.1:52515 when the API serves TLS */
  readonly secureUrl?: string | undefined;
  /** SHA-256 fingerprint of the API's certificate (`AA:BB:…`), when it serves TLS. */
  readonly fingerprint?: string | undefined;
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
  return [
    ...clusterRoutes,
    ...linksRoutes,
    ...calibrationRoutes,
    ...instanceRoutes,
    ...logRoutes,
    eventsRoute,
    ...benchRoutes,
    metricsRoute,
    ...memberRoutes,
    openapi,
    ...dashboardRoutes(),
    ...loginRoutes,
    ...artifactRoutes,
  ];
}

export async function createApiServer(facade: NodeFacade, options: ApiServerOptions): Promise<ApiServer> {
  const routes = apiRoutes();
  const closing = new AbortController();
  const limits: ApiLimits = { ...DEFAULT_API_LIMITS, ...options.limits };
  const limitStats = new LimitStats();
  const shared: RouteShared = {
    closing: closing.signal,
    heartbeatMs: options.heartbeatMs ?? 15_000,
    benches: new Map(),
    broadcast: new Set(),
    auth: new ApiAuth(options.auth),
    sse: new SseGate(limits.maxSseClients, limitStats),
    limitStats,
  };
  const writeRate = new WriteRateLimiter(limits.maxWriteRate, limitStats);
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const hosts = new HostPolicy({
    bindHost: options.host ?? '127.0.0.1',
    allowedHosts: options.allowedHosts,
    corsOrigins: options.corsOrigins,
    interfaceAddresses: options.interfaceAddresses,
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Host, then Origin, before anything else (probe routes included): a rebinding page learns nothing.
    hosts.checkHost(req);
    const cors = hosts.corsHeaders(req);
    if (options.probeHandler?.(req, res)) return;
    const url = new URL(req.url ?? '/', 'http://torus.invalid');
    const cleartext = options.tls !== undefined && !shared.auth.open && plainFromAnotherHost(req);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        ...cors,
        'access-control-allow-methods': 'GET, POST, DELETE',
        'access-control-allow-headers': 'authorization, content-type, last-event-id',
        'access-control-max-age': '600',
      });
      res.end();
      return;
    }
    const match = matchRoute(routes, req.method ?? 'GET', url.pathname);
    const peerCall = match.kind === 'found' && match.route.peer === true && ApiAuth.claimsPeer(req);
    // A person's credential never counts over plain HTTP from another machine; a node's single-use proof may.
    if (cleartext && !peerCall) {
      const to = httpsRedirect(req);
      if (to === undefined) throw tlsRequired(req, options.tls!.fingerprint);
      res.writeHead(308, { location: to, 'content-length': '0', 'cache-control': 'no-store' });
      res.end();
      return;
    }
    // Credentials before 404/405: an unauthenticated caller cannot even map the routes.
    if (peerCall) shared.auth.requirePeer(req);
    else if (match.kind !== 'found' || match.route.access !== 'public') shared.auth.require(req);
    if (match.kind === 'none')
      throw new TorusError('TORUS_API_NOT_FOUND', `no route ${url.pathname}`, { where: 'path', path: url.pathname });
    if (match.kind === 'method') {
      throw new TorusError('TORUS_API_METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${url.pathname}`, {
        allow: match.allow,
      });
    }
    if (match.route.writeRate) writeRate.take(req);
    for (const [k, v] of Object.entries(cors)) res.setHeader(k, v);
    const result = await match.route.handler({
      req,
      res,
      url,
      params: match.params,
      facade,
      shared,
      body: () => readJsonBody(req, bodyLimit),
    });
    // One place for every JSON answer, so no route can forget: workload env values never leave (./redact.ts).
    if (result) sendJson(res, result.status, redactEnv(result.body), result.headers);
  };

  const fail = (req: IncomingMessage, res: ServerResponse, error: unknown): void => {
    const allow =
      error instanceof TorusError && error.code === 'TORUS_API_METHOD_NOT_ALLOWED'
        ? (error.details.allow as string[])
        : undefined;
    // 503 (no leader, shutting down) is an expected, retryable answer, not a fault worth a warning.
    if (!(error instanceof TorusError) || (error.httpStatus >= 500 && error.httpStatus !== 503))
      log.warn('request failed', { method: req.method, url: req.url, error });
    const headers: Record<string, string> = allow ? { allow: allow.join(', ') } : {};
    // Refused before its body was read (no credentials, wrong Host): close rather than drain a stranger's upload.
    if (!req.complete && !res.headersSent) headers.connection = 'close';
    sendError(res, error, headers);
  };
  const serverOptions = {
    connectionsCheckingInterval: Math.max(100, Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4),
  };
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((error: unknown) => fail(req, res, error));
  };
  const plain = createServer(serverOptions, listener);
  const secure = options.tls
    ? createHttpsServer({ ...serverOptions, cert: options.tls.cert, key: options.tls.key }, listener)
    : undefined;
  for (const http of secure ? [plain, secure] : [plain]) {
    // Expect: 100-continue: throughput probes decide before the body is sent (a busy sink refuses without a wasted
    // upload, src/actors/network-profiler/probes/probe-handler.ts); every other request is continued at once and handled as usual.
    http.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      try {
        hosts.checkHost(req);
        hosts.corsHeaders(req);
      } catch (error) {
        fail(req, res, error);
        return;
      }
      if (options.probeHandler?.(req, res, true)) return;
      res.writeContinue();
      http.emit('request', req, res);
    });
    // Slow-loris bounds: headers (an idle socket too) and the whole request must arrive in time. An SSE response is
    // not bounded by them: Node's requestTimeout ends once the request (not the response) is complete.
    http.headersTimeout = limits.headersTimeoutMs;
    http.requestTimeout = limits.requestTimeoutMs;
    // A TLS client that fails the handshake (a scanner, a browser refusing the certificate) is no fault of ours.
    http.on('tlsClientError', (_error: Error, socket) => socket.destroy());
  }
  const front = secure ? frontServer(plain, secure, (f) => guardConnections(f, limits, limitStats)) : undefined;
  const server: Server = front?.server ?? plain;
  if (!secure) guardConnections(plain, limits, limitStats);
  const host = options.host ?? '127.0.0.1';
  await listenApi(server, options.port, host);
  const port = (server.address() as AddressInfo).port;
  const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closed: Promise<void> | undefined;
  return {
    server,
    host,
    port,
    url: `http://${authority}`,
    secureUrl: secure ? `https://${authority}` : undefined,
    fingerprint: options.tls?.fingerprint,
    routes,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        front?.dropUndecided();
        front?.closeServers();
        for (const http of secure ? [plain, secure] : [plain]) {
          http.closeIdleConnections();
          // SSE streams end on `closing`; give them a tick to flush, then cut whatever is left.
          setImmediate(() => http.closeAllConnections());
        }
      })),
  };
}
