import { ERROR_STATUS } from '../core/errors.js';
import { createInstanceRequestSchema, measureLinksRequestSchema, previewRequestSchema, ringBenchRequestSchema } from './request-schemas.js';
import { toJsonSchema } from './schema.js';
import { artifactOpenApiPaths } from './routes/artifact-routes.js';

/**
 * The OpenAPI 3.1 document served at /v1/openapi.json. Request bodies are rendered from the same schemas the
 * server validates with (./request-schemas.ts); a test checks that every route of the server is listed here
 * and every error code of the registry appears, so the document cannot silently fall behind.
 */
type Op = Record<string, unknown>;
const ref = (name: string): Record<string, string> => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description: string): Op => ({ description, content: { 'application/json': { schema } } });
const error = (description: string): Op => json(ref('Error'), description);
const body = (schema: unknown): Op => ({ required: true, content: { 'application/json': { schema } } });
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const common = { '404': error('unknown route or resource'), '405': error('method not allowed (see Allow)'), '503': error('no leader or shutting down; retry after Retry-After seconds') };
const bodyErrors = { '400': error('invalid JSON or a field failing validation; details.path names it'), '413': error('body too large'), '415': error('body is not application/json') };

const openObject = { type: 'object', additionalProperties: true };
const str = { type: 'string' };
const num = { type: 'number' };

const schemas = {
  Error: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
          message: str,
          details: { type: 'object', description: 'where/path for validation errors; the planner reasons for refusals', additionalProperties: true },
        },
      },
    },
  },
  NodeInfo: {
    type: 'object',
    required: ['id', 'name', 'version', 'incarnation', 'uptimeMs', 'role'],
    properties: { id: str, name: str, version: str, incarnation: { type: 'integer' }, uptimeMs: num, role: { type: 'string', enum: ['leader', 'follower', 'candidate', 'alone'] }, leaderId: str, cluster: str,
      quorum: { type: 'object', required: ['ok', 'members', 'reached', 'needed'], description: 'without a quorum the node refuses writes (TORUS_NO_QUORUM)', properties: { ok: { type: 'boolean' }, members: { type: 'integer' }, reached: { type: 'integer' }, needed: { type: 'integer' }, why: str } } },
  },
  StateView: { type: 'object', required: ['state', 'digest', 'lastIndex'], properties: { state: openObject, digest: str, lastIndex: { type: 'integer' } } },
  Topology: {
    type: 'object',
    required: ['nodes', 'links'],
    properties: {
      nodes: { type: 'array', items: { type: 'object', required: ['id'], properties: { id: str, name: str, role: str, memory: { type: 'object', properties: { ramAvailable: num, ramTotal: num } }, interfaces: { type: 'array', items: openObject } } } },
      links: {
        type: 'array',
        items: { type: 'object', required: ['source', 'sink'], properties: { source: str, sink: str, ip: str, type: str, rttMs: num, bandwidthBps: { type: 'number', description: 'bits per second' }, measuredAt: { type: 'number', description: 'epoch ms' } } },
      },
      lastIndex: { type: 'integer' },
    },
  },
  Peer: { type: 'object', required: ['address', 'reason'], properties: { id: str, address: str, reason: str, detail: str, lastHeardAt: num } },
  Instance: {
    type: 'object',
    required: ['id', 'nodes', 'runners'],
    properties: {
      id: str,
      nodes: { type: 'array', items: str, description: 'ring (rank) order' },
      runners: { type: 'array', items: { type: 'object', required: ['node', 'status'], properties: { node: str, rank: { type: 'integer' }, status: str, reason: str, restarts: { type: 'integer' } } } },
      backend: str,
      sharding: str,
      status: str,
    },
  },
  BenchRun: {
    type: 'object',
    required: ['id', 'status', 'startedAt'],
    properties: { id: str, status: { type: 'string', enum: ['running', 'done', 'failed'] }, startedAt: num, progress: openObject, result: { description: 'the benchmark table as JSON (src/ring)' }, error: ref('Error') },
  },
  PreviewRequest: toJsonSchema(previewRequestSchema),
  CreateInstanceRequest: toJsonSchema(createInstanceRequestSchema),
  RingBenchRequest: toJsonSchema(ringBenchRequestSchema),
  MeasureLinksRequest: toJsonSchema(measureLinksRequestSchema),
  MeasureLinksQueued: {
    type: 'object',
    required: ['links'],
    properties: {
      links: { type: 'array', items: { type: 'object', required: ['sink', 'ip'], properties: { sink: str, ip: str, type: str, measuredAt: { type: 'number', description: 'epoch ms of the previous measurement' } } } },
      queued: { type: 'integer', description: 'links waiting for the next measuring pass (this request and earlier ones)' },
    },
  },
};

const paths: Record<string, Record<string, Op>> = {
  '/node_id': { get: { summary: "this node's id (identity probe)", responses: { '200': json(str, 'the id as a JSON string') } } },
  '/v1/node': { get: { summary: 'this node', responses: { '200': json(ref('NodeInfo'), 'node identity and role') } } },
  '/v1/state': { get: { summary: 'replicated state, digest, last index', responses: { '200': json(ref('StateView'), 'the state') } } },
  '/v1/topology': { get: { summary: 'nodes and measured links', responses: { '200': json(ref('Topology'), 'the topology') } } },
  '/v1/peers': { get: { summary: 'heard but not joined', responses: { '200': json({ type: 'object', properties: { peers: { type: 'array', items: ref('Peer') } } }, 'peers with reasons') } } },
  '/v1/links/measure': {
    post: {
      summary: "re-measure this node's links now (all, or to one peer / one address); new figures arrive as LinkMeasured (/v1/topology measuredAt)",
      requestBody: { required: false, content: { 'application/json': { schema: ref('MeasureLinksRequest') } } },
      responses: { '202': json(ref('MeasureLinksQueued'), 'the links the profiler will measure'), ...bodyErrors, '404': error('no link of this node matches the filter (nothing changes)'), '503': error('this node runs no network profiler') },
    },
  },
  '/v1/placements/preview': {
    post: { summary: 'every placement option with explanations', requestBody: body(ref('PreviewRequest')), responses: { '200': json(openObject, 'plans and refusals'), ...bodyErrors, ...common } },
  },
  '/v1/instances': {
    post: {
      summary: 'place and start an instance',
      requestBody: body(ref('CreateInstanceRequest')),
      responses: { '201': json(ref('Instance'), 'placed; Location names it'), ...bodyErrors, '409': error("placement refused; details carry the planner's reason"), ...common },
    },
    get: { summary: 'every instance', responses: { '200': json({ type: 'object', properties: { instances: { type: 'array', items: ref('Instance') } } }, 'instances') } },
  },
  '/v1/instances/{id}': {
    get: { summary: 'one instance with runner statuses', parameters: [idParam], responses: { '200': json(ref('Instance'), 'the instance'), ...common } },
    delete: { summary: 'stop and remove an instance', parameters: [idParam], responses: { '200': json({ type: 'object', properties: { deleted: str } }, 'deleted'), ...common } },
  },
  '/v1/events': {
    get: {
      summary: 'Server-Sent Events of applied events; `id:` is the event index; resumable with Last-Event-ID or ?after=N; `bench` and `gap` named events; `: heartbeat` comments',
      parameters: [
        { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'integer', minimum: 0 } },
        { name: 'after', in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description: 'default 0: replay every retained event' },
      ],
      responses: { '200': { description: 'the stream', content: { 'text/event-stream': { schema: str } } }, '400': error('malformed Last-Event-ID / after') },
    },
  },
  '/v1/bench/ring': {
    post: { summary: 'start a ring benchmark', requestBody: body(ref('RingBenchRequest')), responses: { '202': json(ref('BenchRun'), 'started; progress on /v1/events as `bench`'), ...bodyErrors, '409': error('cannot place the ring'), ...common } },
  },
  '/v1/bench/ring/{id}': { get: { summary: 'a benchmark run', parameters: [idParam], responses: { '200': json(ref('BenchRun'), 'the run'), ...common } } },
  '/metrics': { get: { summary: 'Prometheus metrics', responses: { '200': { description: 'text format 0.0.4', content: { 'text/plain': { schema: str } } } } } },
  '/v1/openapi.json': { get: { summary: 'this document', responses: { '200': json(openObject, 'OpenAPI 3.1') } } },
  '/': { get: { summary: 'the dashboard', responses: { '200': { description: 'HTML page', content: { 'text/html': { schema: str } } } } } },
  '/dashboard/app.js': { get: { summary: 'dashboard script', responses: { '200': { description: 'JavaScript', content: { 'text/javascript': { schema: str } } } } } },
  '/dashboard/style.css': { get: { summary: 'dashboard styles', responses: { '200': { description: 'CSS', content: { 'text/css': { schema: str } } } } } },
  ...artifactOpenApiPaths,
};

export function openApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'torus node API', version, description: 'One node of a torus cluster: identity, replicated state, topology, placement, instances, events, ring benchmark. Errors are {"error":{"code","message","details"}}.' },
    paths,
    components: { schemas },
  };
}

/** `/v1/instances/:id` → `/v1/instances/{id}` (OpenAPI's template syntax). */
export const openApiPath = (routePath: string): string => routePath.replace(/:([A-Za-z_]\w*)/g, '{$1}');
