import { ERROR_STATUS } from '../core/errors.js';
import { INTERFACE_TYPES, RUNNER_STATUSES } from '../protocols/events.js';

/**
 * The answers' JSON schemas for the OpenAPI document, written to describe exactly what the views
 * (./views.ts, ./node-facade.ts) and the routes put on the wire: every object says whether it is closed
 * (`additionalProperties: false`, the usual case) or open on purpose (passthrough data owned elsewhere: the
 * replicated state, planner plans, ring tables). test/api/openapi-live.test.ts calls every route and validates
 * the real answers against these under strict Ajv, and fails on any object that does not say which it is.
 */
type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str: Schema = { type: 'string' };
const num: Schema = { type: 'number' };
const int: Schema = { type: 'integer' };
const bool: Schema = { type: 'boolean' };
const arrayOf = (items: Schema, description?: string): Schema => ({ type: 'array', items, ...(description ? { description } : {}) });
/** A closed object: these properties (the `required` ones always present), nothing else. */
const closed = (required: readonly string[], properties: Record<string, Schema>, description?: string): Schema => ({
  type: 'object', required: [...required], properties, additionalProperties: false, ...(description ? { description } : {}),
});
/** Passthrough data another part owns; its known fields are named, others may appear. */
const open = (description: string, properties: Record<string, Schema> = {}): Schema => ({ type: 'object', description, properties, additionalProperties: true });
const epochMs = (what: string): Schema => ({ type: 'number', description: `${what}, epoch milliseconds` });

const errorBody = closed(['code', 'message'], {
  code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
  message: str,
  details: open('where/path for validation errors; the planner reasons for refusals'),
});

const endpoint = closed(['ip', 'port'], { ip: str, port: int });

const instancePlan = closed(['id', 'backend', 'sharding', 'nodes', 'shards', 'port'], {
  id: str,
  backend: { type: 'string', enum: ['ring', 'jaccl'] },
  sharding: { type: 'string', enum: ['pipeline', 'tensor'] },
  nodes: arrayOf(str, 'rank order'),
  shards: arrayOf(closed(['node', 'rank', 'worldSize', 'startLayer', 'endLayer'], { node: str, rank: int, worldSize: int, startLayer: int, endLayer: int })),
  port: int,
  hostsByNode: { type: 'object', description: 'per node, the addresses its ring neighbours dial', additionalProperties: arrayOf(endpoint) },
  jacclDevices: arrayOf(arrayOf({ type: ['string', 'null'] }), 'RDMA device matrix (jaccl)'),
  jacclCoordinators: { type: 'object', additionalProperties: str },
}, 'the placement the leader applied (src/protocols/instance-plan.ts)');

const workloadSpec = closed(['id', 'kind', 'memoryBytes', 'layers'], {
  id: str,
  kind: { type: 'string', enum: ['ring', 'exec'] },
  memoryBytes: int,
  layers: int,
  hiddenSize: int,
  kvHeads: int,
  supportsTensor: bool,
  command: str,
  args: arrayOf(str),
  env: { type: 'object', additionalProperties: { type: 'string', const: '[redacted]' }, description: 'the names of the variables set; every value is "[redacted]" (values never leave the node)' },
  cwd: str,
}, 'what the instance runs (src/protocols/workload-spec.ts)');

export const responseSchemas: Record<string, Schema> = {
  Error: closed(['error'], { error: errorBody }),
  NodeInfo: closed(['id', 'name', 'version', 'incarnation', 'uptimeMs', 'role'], {
    id: str, name: str, version: str, incarnation: int, uptimeMs: num,
    role: { type: 'string', enum: ['leader', 'follower', 'candidate', 'alone'] },
    leaderId: str,
    cluster: str,
    quorum: closed(['ok', 'members', 'reached', 'needed'], { ok: bool, members: int, reached: int, needed: int, why: str }, 'without a quorum the node refuses writes (TORUS_NO_QUORUM)'),
    security: closed(['mode'], { mode: { type: 'string', enum: ['secret', 'open'] }, secretSource: str, warning: str },
      'secret: a cluster credential guards the API and the cluster port (secretSource says where the secret came from, never its value); open: --insecure-open, anyone who reaches the node controls it'),
  }),
  StateView: closed(['state', 'digest', 'lastIndex'], {
    state: open('the replicated state exactly as the topology keeper holds it (src/core/topology/state.ts)', {
      lastIndex: int, lastTerm: int,
      nodes: { type: 'object', description: 'node records by id', additionalProperties: open('a node record') },
      links: arrayOf(open('a link record')),
      instances: { type: 'object', description: 'instance records by id', additionalProperties: open('an instance record') },
    }),
    digest: str,
    lastIndex: int,
  }),
  Topology: closed(['nodes', 'links'], {
    nodes: arrayOf(closed(['id'], {
      id: str, name: str, incarnation: int, version: str,
      role: { type: 'string', enum: ['leader', 'follower', 'candidate', 'alone'] },
      memory: closed(['ramAvailable', 'ramTotal'], { ramAvailable: num, ramTotal: num }, 'bytes'),
      interfaces: arrayOf(closed(['name', 'ip', 'type'], { name: str, ip: str, type: { type: 'string', enum: [...INTERFACE_TYPES] } }), 'one entry per address'),
    })),
    links: arrayOf(closed(['source', 'sink', 'ip', 'type'], {
      source: str, sink: str, ip: str,
      type: { type: 'string', enum: [...INTERFACE_TYPES], description: "the sink interface's type" },
      rttMs: num,
      bandwidthBps: { type: 'number', description: 'bits per second' },
      measuredAt: epochMs('last measurement'),
    }, 'one directed edge per working address')),
    lastIndex: int,
  }),
  Peer: closed(['address', 'reason'], {
    address: str,
    id: str,
    nodeId: str,
    reason: { type: 'string', enum: ['other-cluster', 'incompatible-version', 'auth-failure', 'unreachable'] },
    detail: str,
    via: { type: 'string', enum: ['static', 'mdns', 'gossip', 'inbound'] },
    at: epochMs('last heard'),
    lastHeardAt: epochMs('last heard (same as at)'),
    attempts: { type: 'integer', description: 'refused dials in a row' },
    nextRetryAt: epochMs('next dial'),
  }, 'a node heard but not joined, and why'),
  PeerList: closed(['peers'], { peers: arrayOf(ref('Peer')) }),
  Instance: closed(['id', 'nodes', 'runners', 'backend', 'sharding', 'status', 'generation', 'workload', 'plan'], {
    id: str,
    nodes: arrayOf(str, 'ring (rank) order'),
    runners: arrayOf(closed(['node', 'rank', 'status'], {
      node: str, rank: int, status: { type: 'string', enum: [...RUNNER_STATUSES] }, reason: str, restarts: { type: 'integer', description: 'restart attempts so far' },
    })),
    backend: { type: 'string', enum: ['ring', 'jaccl'] },
    sharding: { type: 'string', enum: ['pipeline', 'tensor'] },
    status: { type: 'string', enum: ['active', 'needs-replacement', 'failed'] },
    reason: str,
    generation: { type: 'integer', description: '1 at creation, +1 per re-placement' },
    workload: workloadSpec,
    plan: instancePlan,
    artifacts: arrayOf(closed(['id', 'name', 'bytes', 'nodes'], {
      id: str, name: str, bytes: int,
      nodes: arrayOf(closed(['node', 'haveBytes', 'complete'], {
        node: str, haveBytes: int, complete: bool, rateBps: { type: 'integer', description: 'receiving at, bytes/s (while a transfer runs)' },
      })),
    }), "the workload's artifacts on the placed nodes (docs/artifacts.md); present when the workload lists any"),
  }),
  InstanceList: closed(['instances'], { instances: arrayOf(ref('Instance')) }),
  Deleted: closed(['deleted'], { deleted: str }),
  Previews: closed(['previews'], {
    previews: arrayOf(closed(['sharding', 'backend', 'nodeCount'], {
      sharding: { type: 'string', enum: ['pipeline', 'tensor'] },
      backend: { type: 'string', enum: ['ring', 'jaccl'] },
      nodeCount: int,
      plan: open("the planner's plan: instance, hops, explanation (src/core/placement/plan-result.ts)"),
      refusal: open("the planner's reason: kind, message, explanation (src/core/placement/plan-result.ts)"),
    }, 'one option: a plan, or the refusal')),
  }, 'every sharding × backend × node count option'),
  BenchRun: closed(['id', 'status', 'startedAt'], {
    id: str,
    status: { type: 'string', enum: ['running', 'done', 'failed'] },
    startedAt: epochMs('start'),
    progress: closed(['done', 'total'], { done: int, total: int, message: str, row: { description: 'the latest finished row of the table (src/ring)' } }),
    result: { description: 'the benchmark table as JSON (src/ring)' },
    error: errorBody,
  }),
  MeasureLinksQueued: closed(['links'], {
    links: arrayOf(closed(['sink', 'ip'], { sink: str, ip: str, type: str, measuredAt: epochMs('the previous measurement') })),
    queued: { type: 'integer', description: 'links waiting for the next measuring pass (this request and earlier ones)' },
  }),
  MemberRemoved: closed(['nodeId', 'status', 'message'], { nodeId: str, status: { type: 'string', const: 'removed' }, message: str }),
  MemberRemovalPending: closed(['nodeId', 'status', 'message'], { nodeId: str, status: { type: 'string', const: 'pending' }, message: str }),
  OpenApiDocument: open('this document (OpenAPI 3.1)', { openapi: { type: 'string', const: '3.1.0' } }),
};
