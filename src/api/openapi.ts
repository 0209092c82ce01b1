import { operationIdOf } from './operation-ids.js';
import { queryParameters } from './query.js';
import { LogsQuery, requestSchemas } from './request-schemas.js';
import { responseSchemas } from './response-schemas.js';
import { MAX_EVENT_INDEX } from './routes/events-route.js';
import { artifactOpenApiPaths } from './routes/artifact-routes.js';

/**
 * The OpenAPI 3.1 document served at /v1/openapi.json. Its component schemas are the TypeBox schemas themselves:
 * request bodies are the ones the server validates with (./request-schemas.ts), answers are described exactly in
 * ./response-schemas.ts (TypeBox schemas are JSON Schema; its own marks are symbols, which JSON drops). Tests
 * check that every route of the server is listed here, every error code of the registry appears, and every
 * route's real answers validate against this document (test/api/openapi-live.test.ts).
 */
type Op = Record<string, unknown>;
const ref = (name: string): Record<string, string> => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description: string): Op => ({
  description,
  content: { 'application/json': { schema } },
});
const error = (description: string): Op => json(ref('Error'), description);
const body = (schema: unknown): Op => ({ required: true, content: { 'application/json': { schema } } });
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const common = {
  '401': error('no or wrong credentials (TORUS_UNAUTHENTICATED)'),
  '404': error('unknown route or resource'),
  '405': error('method not allowed (see Allow)'),
  '503': error('no leader or shutting down; retry after Retry-After seconds'),
};
const rateLimited = {
  '429': error(
    'too many create / measure / bench requests from this client (--max-write-rate); retry after Retry-After seconds',
  ),
};
const bodyErrors = {
  '400': error('invalid JSON or a field failing validation; details.path names it'),
  '413': error('body too large'),
  '415': error('body is not application/json'),
};

const str = { type: 'string' };

/**
 * The request schemas as the server checks them, with each union of forms written `oneOf`: the branches of a
 * union of closed objects exclude each other (a workload's by `kind`, a broadcast's by which field it has), so
 * "any of" is "exactly one of", which is what client generators read as a choice of forms. A rule's `anyOf` of
 * open objects ("hiddenSize or activationBytesPerToken") stays `anyOf`: both may be given.
 * test/api/openapi-property.test.ts validates requests against this document with an OpenAPI 3.1 validator and
 * Ajv, so a `oneOf` whose branches overlapped would fail there.
 */
function exclusiveUnions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(exclusiveUnions);
  if (value === null || typeof value !== 'object') return value;
  const forms = (v: unknown): boolean =>
    Array.isArray(v) && v.every((b) => (b as { additionalProperties?: unknown }).additionalProperties === false);
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k === 'anyOf' && forms(v) ? 'oneOf' : k, exclusiveUnions(v)]),
  );
}

const schemas = { ...responseSchemas, ...(exclusiveUnions(requestSchemas) as typeof requestSchemas) };

const paths: Record<string, Record<string, Op>> = {
  '/node_id': {
    get: {
      summary: "this node's id (identity probe; needs no credentials)",
      security: [],
      responses: { '200': json(str, 'the id as a JSON string') },
    },
  },
  '/v1/node': { get: { summary: 'this node', responses: { '200': json(ref('NodeInfo'), 'node identity and role') } } },
  '/v1/state': {
    get: { summary: 'replicated state, digest, last index', responses: { '200': json(ref('StateView'), 'the state') } },
  },
  '/v1/topology': {
    get: { summary: 'nodes and measured links', responses: { '200': json(ref('Topology'), 'the topology') } },
  },
  '/v1/peers': {
    get: { summary: 'heard but not joined', responses: { '200': json(ref('PeerList'), 'peers with reasons') } },
  },
  '/v1/device/measure': {
    post: {
      summary:
        "measure this node's memory bandwidth (GB/s) and f32 compute (GFLOP/s) again; declared figures (--device-gflops, --device-mem-bandwidth) stay",
      responses: {
        '200': json(ref('DeviceMeasured'), "this node's device figures"),
        ...rateLimited,
        '503': error('this node runs no network profiler'),
      },
    },
  },
  '/v1/links/measure': {
    post: {
      summary:
        "re-measure this node's links now (all, or to one peer / one address); new figures arrive as LinkMeasured (/v1/topology measuredAt)",
      requestBody: { required: false, content: { 'application/json': { schema: ref('MeasureLinksRequest') } } },
      responses: {
        '202': json(ref('MeasureLinksQueued'), 'the links the profiler will measure'),
        ...bodyErrors,
        ...rateLimited,
        '404': error('no link of this node matches the filter (nothing changes)'),
        '503': error('this node runs no network profiler'),
      },
    },
  },
  '/v1/calibrations': {
    post: {
      summary:
        "run a framework's calibration command on each node (default every node) as a one-rank exec job; record the figures its one torusCalibration line gives",
      requestBody: body(ref('CalibrationRequest')),
      responses: {
        '200': json(
          ref('CalibrationRun'),
          'per node, the figures recorded or why none were (refused output stores nothing)',
        ),
        ...bodyErrors,
        ...rateLimited,
        ...common,
      },
    },
    get: {
      summary: 'the calibrated figures the state holds, per node and framework',
      responses: { '200': json(ref('Calibrations'), 'node id → framework → figures'), ...common },
    },
  },
  '/v1/placements/preview': {
    post: {
      summary: 'every placement option with explanations',
      requestBody: body(ref('PreviewRequest')),
      responses: {
        '200': json(ref('Previews'), 'plans and refusals'),
        ...bodyErrors,
        ...common,
        '404': error(
          'unknown route, workload.model names an artifact no node holds (TORUS_ARTIFACT_UNKNOWN), or pinned nodes the cluster does not have (TORUS_NODE_UNKNOWN; details.unknown)',
        ),
        '409': error('workload.model names an artifact that is not a model (TORUS_ARTIFACT_NOT_MODEL)'),
      },
    },
  },
  '/v1/instances': {
    post: {
      summary: 'place and start an instance',
      requestBody: body(ref('CreateInstanceRequest')),
      responses: {
        '201': json(ref('Instance'), 'placed; Location names it'),
        ...bodyErrors,
        '409': error(
          "placement refused (TORUS_PLACEMENT_REFUSED; details carry the planner's reason, for pinned nodes too), instanceId already taken (TORUS_INSTANCE_EXISTS), or workload.model not a model (TORUS_ARTIFACT_NOT_MODEL)",
        ),
        ...rateLimited,
        ...common,
        '404': error(
          'unknown route, workload.model names an artifact no node holds (TORUS_ARTIFACT_UNKNOWN), or pinned nodes the cluster does not have (TORUS_NODE_UNKNOWN; details.unknown)',
        ),
      },
    },
    get: { summary: 'every instance', responses: { '200': json(ref('InstanceList'), 'instances') } },
  },
  '/v1/instances/{id}': {
    get: {
      summary: 'one instance with runner statuses',
      parameters: [idParam],
      responses: { '200': json(ref('Instance'), 'the instance'), ...common },
    },
    delete: {
      summary: 'stop and remove an instance',
      parameters: [idParam],
      responses: { '200': json(ref('Deleted'), 'deleted'), ...common },
    },
  },
  '/v1/instances/{id}/logs': {
    get: {
      summary:
        "a rank's stdout or stderr as plain text; follow=1 streams it until that rank's command has ended for good (any node answers: it fetches the log from the node that holds it)",
      parameters: [idParam, ...queryParameters(LogsQuery)],
      responses: {
        '200': { description: 'the log text', content: { 'text/plain': { schema: str } } },
        '400': error('a rank, stream or tail outside what the parameters allow'),
        ...common,
        '404': error('no such instance, or no such rank in it (TORUS_API_NOT_FOUND)'),
      },
    },
  },
  '/v1/members/{id}': {
    delete: {
      summary: 'remove a dead member from the membership (docs/cluster.md, Removing a member)',
      parameters: [idParam],
      responses: {
        '200': json(ref('MemberRemoved'), 'the leader wrote its NodeGone'),
        '202': json(
          ref('MemberRemovalPending'),
          "no leader: no longer counted toward this node's quorum; NodeGone once one is elected",
        ),
        '409': error(
          'the member is connected (TORUS_MEMBER_CONNECTED), or is the answering node itself (TORUS_MEMBER_SELF)',
        ),
        ...common,
      },
    },
  },
  '/v1/events': {
    get: {
      summary:
        'Server-Sent Events of applied events; `id:` is the event index; resumable with Last-Event-ID or ?after=N; `bench` and `gap` named events; `: heartbeat` comments',
      parameters: [
        {
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          schema: { type: 'integer', minimum: 0, maximum: MAX_EVENT_INDEX },
        },
        {
          name: 'after',
          in: 'query',
          required: false,
          schema: { type: 'integer', minimum: 0, maximum: MAX_EVENT_INDEX },
          description: 'default 0: replay every retained event',
        },
      ],
      responses: {
        '200': { description: 'the stream', content: { 'text/event-stream': { schema: str } } },
        '400': error('malformed Last-Event-ID / after'),
        '503': error('at --max-sse-clients open streams (TORUS_LIMIT_REACHED)'),
      },
    },
  },
  '/v1/bench/ring': {
    get: {
      summary: 'the recent benchmark runs of this node, newest first',
      responses: { '200': json(ref('BenchRunList'), 'the runs'), ...common },
    },
    post: {
      summary: 'start a ring benchmark',
      requestBody: body(ref('RingBenchRequest')),
      responses: {
        '202': json(ref('BenchRun'), 'started; progress on /v1/events as `bench`'),
        ...bodyErrors,
        '409': error('cannot place the ring'),
        ...rateLimited,
        ...common,
      },
    },
  },
  '/v1/bench/pipeline': {
    post: {
      summary:
        'place the described workload, run a pipeline step through its stages and answer measured step time and tokens/s beside the prediction',
      requestBody: body(ref('PipelineBenchRequest')),
      responses: {
        '200': json(ref('PipelineBenchResult'), 'measured beside predicted'),
        ...bodyErrors,
        '409': error('cannot place the workload'),
        ...rateLimited,
        ...common,
      },
    },
  },
  '/v1/bench/ring/{id}': {
    get: {
      summary: 'a benchmark run',
      parameters: [idParam],
      responses: { '200': json(ref('BenchRun'), 'the run'), ...common },
    },
  },
  '/metrics': {
    get: {
      summary: 'Prometheus metrics',
      responses: { '200': { description: 'text format 0.0.4', content: { 'text/plain': { schema: str } } } },
    },
  },
  '/v1/openapi.json': {
    get: { summary: 'this document', responses: { '200': json(ref('OpenApiDocument'), 'OpenAPI 3.1') } },
  },
  '/': {
    get: {
      summary:
        'the dashboard; without a session the sign-in form; `?token=` with the API token starts a session (Set-Cookie torus_session) and answers 303 to /',
      security: [],
      parameters: [{ name: 'token', in: 'query', required: false, schema: str }],
      responses: {
        '200': { description: 'HTML page (dashboard or sign-in form)', content: { 'text/html': { schema: str } } },
        '303': { description: 'signed in; redirect to / without the token' },
        '401': { description: 'wrong token: the sign-in form again', content: { 'text/html': { schema: str } } },
      },
    },
  },
  '/login': {
    get: {
      summary: 'the sign-in form',
      security: [],
      responses: { '200': { description: 'HTML form', content: { 'text/html': { schema: str } } } },
    },
    post: {
      summary: 'sign in with the API token (form field `token`)',
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: { type: 'object', required: ['token'], properties: { token: str }, additionalProperties: false },
          },
        },
      },
      responses: {
        '303': { description: 'signed in (Set-Cookie torus_session; HttpOnly; SameSite=Strict); redirect to /' },
        '401': { description: 'wrong token: the form again', content: { 'text/html': { schema: str } } },
      },
    },
  },
  ...Object.fromEntries(
    ['app.js', 'dom.js', 'jobs.js', 'bench-chart.js', 'previews.js'].map((name) => [
      `/dashboard/${name}`,
      {
        get: {
          summary: `dashboard script (${name}, an ES module)`,
          responses: { '200': { description: 'JavaScript', content: { 'text/javascript': { schema: str } } } },
        },
      },
    ]),
  ),
  '/dashboard/style.css': {
    get: {
      summary: 'dashboard styles',
      responses: { '200': { description: 'CSS', content: { 'text/css': { schema: str } } } },
    },
  },
  ...artifactOpenApiPaths,
};

/**
 * The answers and names every operation has, added here once: its `operationId` (./operation-ids.ts), and the
 * answers the server gives before any route runs (src/api/server.ts): on every operation a wrong Host (421),
 * a foreign Origin or a credential sent over plain HTTP from another host (403), and on every operation that is
 * not public (`security: []`) missing or wrong credentials (401). Added here once so no operation can leave them out.
 */
function withGuardAnswers(all: Record<string, Record<string, Op>>): Record<string, Record<string, Op>> {
  const guards = {
    '403': error(
      'a foreign Origin (TORUS_ORIGIN_REFUSED), or a credential over plain HTTP from another host (TORUS_TLS_REQUIRED: use the https URL)',
    ),
    '421': error('a Host header that does not name this node (TORUS_HOST_REFUSED)'),
  };
  return Object.fromEntries(
    Object.entries(all).map(([path, ops]) => [
      path,
      Object.fromEntries(
        Object.entries(ops).map(([method, op]) => {
          const isPublic = Array.isArray(op.security) && op.security.length === 0;
          const responses = {
            ...guards,
            ...(isPublic ? {} : { '401': error('no or wrong credentials (TORUS_UNAUTHENTICATED)') }),
            ...(op.responses as Record<string, Op>),
          };
          return [method, { operationId: operationIdOf(method, path), ...op, responses }];
        }),
      ),
    ]),
  );
}

export function openApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'torus node API',
      version,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      description:
        'One node of a torus cluster: identity, replicated state, topology, placement, instances, events, ring benchmark. Errors are {"error":{"code","message","details"}}. ' +
        'Every route but GET /node_id needs `Authorization: Bearer <token>` (`node dist/main.js token --api`) or the dashboard session cookie (401 TORUS_UNAUTHENTICATED), ' +
        "unless the node runs with --insecure-open. The port serves HTTPS (the node's own certificate, pinned by its SHA-256 fingerprint) and plain HTTP; plain HTTP carries credentials only from the node's own machine (403 TORUS_TLS_REQUIRED otherwise). " +
        'Before any route: a Host header that does not name this node is 421 TORUS_HOST_REFUSED, a foreign Origin 403 TORUS_ORIGIN_REFUSED.',
    },
    // Relative: the node that served this document (OpenAPI resolves it against the document's own URL).
    servers: [{ url: '/', description: 'the node that served this document (https, or http from its own machine)' }],
    paths: withGuardAnswers(paths),
    security: [{ bearerToken: [] }, { dashboardSession: [] }],
    components: {
      schemas,
      securitySchemes: {
        bearerToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'the API token: derived from the cluster secret, or set with --api-token-file',
        },
        dashboardSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'torus_session',
          description: 'set by GET /?token= or POST /login',
        },
      },
    },
  };
}

/** `/v1/instances/:id` → `/v1/instances/{id}` (OpenAPI's template syntax). */
export const openApiPath = (routePath: string): string => routePath.replace(/:([A-Za-z_]\w*)/g, '{$1}');
