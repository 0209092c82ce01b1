/**
 * The OpenAPI document against the node's real answers. The document itself must validate as OpenAPI 3.1
 * (@seriousme/openapi-schema-validator, the official 3.1 JSON schemas); every route of the server is then called
 * with real requests (successes and the errors it documents), and each answer must have a documented status
 * and content type, and its JSON body must satisfy the documented schema under Ajv's JSON Schema 2020-12
 * dialect in strict mode (unknown keywords, required names without properties, loose types all rejected).
 * A route added without a plan here fails the test.
 */
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { openApiPath } from '../../src/api/openapi.js';
import { apiRoutes } from '../../src/api/server.js';
import { AUTH, TEST_TOKEN, raw, startApi } from './fixtures/harness.js';
import { checkAnswer, compiler, json, rawHead, workload, type Call } from './fixtures/openapi-check.js';

/** A request without credentials (raw() drops an empty authorization header). */
const anonymous = { authorization: '' };

/** Real requests per route: the success first, then the error answers the route documents. */
function plans(benchId: () => string): Record<string, readonly Call[]> {
  return {
    'GET /node_id': [
      { path: '/node_id', status: 200 },
      { path: '/node_id', headers: anonymous, status: 200 },
    ],
    'GET /v1/node': [
      { path: '/v1/node', status: 200 },
      { path: '/v1/node', headers: anonymous, status: 401 },
      { path: '/v1/node', headers: { authorization: 'Bearer tt_wrong' }, status: 401 },
      { path: '/v1/node', headers: { host: 'evil.example' }, status: 421 },
      { path: '/v1/node', headers: { origin: 'http://evil.example' }, status: 403 },
    ],
    'GET /v1/state': [{ path: '/v1/state', status: 200 }],
    'GET /v1/topology': [{ path: '/v1/topology', status: 200 }],
    'GET /v1/peers': [{ path: '/v1/peers', status: 200 }],
    'POST /v1/device/measure': [{ path: '/v1/device/measure', status: 200 }],
    'POST /v1/bench/pipeline': [
      { path: '/v1/bench/pipeline', body: json({ workload: { id: 'w', layers: 2 } }), status: 400 },
    ],
    // The in-process facade runs no jobs: 503; a real node's answers are in openapi-property and calibrations-node.
    'POST /v1/calibrations': [
      { path: '/v1/calibrations', body: json({ framework: 'torch', command: ['/bin/true'] }), status: 503 },
      { path: '/v1/calibrations', body: json({ framework: 'Torch', command: ['/bin/true'] }), status: 400 },
      { path: '/v1/calibrations', body: json({ framework: 'torch', command: [] }), status: 400 },
    ],
    'GET /v1/calibrations': [{ path: '/v1/calibrations', status: 200 }],
    'POST /v1/links/measure': [
      { path: '/v1/links/measure', body: json({ peer: 'node-b' }), status: 202 },
      { path: '/v1/links/measure', status: 202 },
      { path: '/v1/links/measure', body: json({ ip: 'not-an-ip' }), status: 400 },
      { path: '/v1/links/measure', body: json({ peer: 'nobody' }), status: 404 },
    ],
    'POST /v1/placements/preview': [
      { path: '/v1/placements/preview', body: json({ workload }), status: 200 },
      { path: '/v1/placements/preview', body: json({ workload: { id: 'w' } }), status: 400 },
      { path: '/v1/placements/preview', body: 'x=1', headers: { 'content-type': 'text/plain' }, status: 415 },
    ],
    'POST /v1/instances': [
      { path: '/v1/instances', body: json({ workload, instanceId: 'inst-doc' }), status: 201 },
      // A workload naming artifacts: the answer's workload carries them (the document once lacked the field).
      {
        path: '/v1/instances',
        body: json({ workload: { ...workload, id: 'w-art', artifacts: ['ab'.repeat(32)] }, instanceId: 'inst-art' }),
        status: 201,
      },
      { path: '/v1/instances', body: json({ workload: { ...workload, memoryBytes: 2 ** 50 } }), status: 409 },
      { path: '/v1/instances', body: '{"workload":', status: 400 },
      { path: '/v1/instances', body: json({ workload, extra: 1 }), status: 400 },
    ],
    'GET /v1/instances': [{ path: '/v1/instances', status: 200 }],
    'GET /v1/instances/{id}': [
      { path: '/v1/instances/inst-doc', status: 200 },
      { path: '/v1/instances/nope', status: 404 },
    ],
    'DELETE /v1/instances/{id}': [
      { path: '/v1/instances/inst-doc', status: 200 },
      { path: '/v1/instances/inst-doc', status: 404 },
    ],
    'GET /v1/events': [
      { path: '/v1/events?after=0', status: 200 },
      { path: '/v1/events?after=-1', status: 400 },
    ],
    'POST /v1/bench/ring': [
      { path: '/v1/bench/ring', body: json({ nodes: ['node-a', 'node-b'], minBytes: 8, maxBytes: 16 }), status: 202 },
      { path: '/v1/bench/ring', body: json({ nodes: ['node-a', 'ghost'] }), status: 404 },
      { path: '/v1/bench/ring', body: json({ minBytes: 'big' }), status: 400 },
    ],
    'GET /v1/bench/ring': [{ path: '/v1/bench/ring', status: 200 }],
    'GET /v1/bench/ring/{id}': [
      {
        get path() {
          return `/v1/bench/ring/${benchId()}`;
        },
        status: 200,
      },
      { path: '/v1/bench/ring/nope', status: 404 },
    ],
    'GET /metrics': [{ path: '/metrics', status: 200 }],
    'GET /v1/openapi.json': [{ path: '/v1/openapi.json', status: 200 }],
    'GET /': [
      { path: '/', status: 200 },
      { path: '/', headers: anonymous, status: 200 },
      { path: `/?token=${TEST_TOKEN}`, headers: anonymous, status: 303 },
      { path: '/?token=tt_wrong', headers: anonymous, status: 401 },
    ],
    'GET /dashboard/app.js': [{ path: '/dashboard/app.js', status: 200 }],
    'GET /dashboard/dom.js': [{ path: '/dashboard/dom.js', status: 200 }],
    'GET /dashboard/jobs.js': [{ path: '/dashboard/jobs.js', status: 200 }],
    'GET /dashboard/bench-chart.js': [{ path: '/dashboard/bench-chart.js', status: 200 }],
    'GET /dashboard/previews.js': [{ path: '/dashboard/previews.js', status: 200 }],
    'GET /dashboard/style.css': [{ path: '/dashboard/style.css', status: 200 }],
    'GET /login': [
      { path: '/login', headers: anonymous, status: 200 },
      { path: '/login', headers: { ...anonymous, host: 'evil.example' }, status: 421 },
    ],
    'POST /login': [
      {
        path: '/login',
        body: `token=${TEST_TOKEN}`,
        headers: { ...anonymous, 'content-type': 'application/x-www-form-urlencoded' },
        status: 303,
      },
      {
        path: '/login',
        body: 'token=tt_wrong',
        headers: { ...anonymous, 'content-type': 'application/x-www-form-urlencoded' },
        status: 401,
      },
    ],
    // The in-process node holds no runners nor an artifact store: these answer their documented errors here; the
    // real answers are checked in test/e2e (logs) and test/artifacts (store and transfers).
    'GET /v1/instances/{id}/logs': [{ path: '/v1/instances/nope/logs?rank=0', status: 404 }],
    'GET /v1/artifacts': [{ path: '/v1/artifacts', status: 503 }],
    'GET /v1/artifacts/transfers': [{ path: '/v1/artifacts/transfers', status: 503 }],
    'GET /v1/artifacts/{id}': [
      { path: '/v1/artifacts/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', status: 503 },
      { path: '/v1/artifacts/not-hex', status: 400 },
    ],
    'POST /v1/artifacts/{id}/announce': [
      {
        path: '/v1/artifacts/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/announce',
        body: json({}),
        status: 503,
      },
    ],
    'POST /v1/artifacts/{id}/fetch': [
      {
        path: '/v1/artifacts/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/fetch',
        body: json({}),
        status: 503,
      },
    ],
    'POST /v1/artifacts/{id}/broadcast': [
      {
        path: '/v1/artifacts/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/broadcast',
        body: json({ nodes: ['node-a'] }),
        status: 503,
      },
    ],
    'DELETE /v1/artifacts/{id}': [
      { path: '/v1/artifacts/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', status: 503 },
    ],
    'GET /metrics#anonymous': [{ path: '/metrics', headers: anonymous, status: 401 }],
    // Last: it removes node-c from the membership.
    'DELETE /v1/members/{id}': [
      { path: '/v1/members/node-c', status: 200 },
      { path: '/v1/members/node-a', status: 409 }, // itself: TORUS_MEMBER_SELF
      { path: '/v1/members/ghost', status: 404 },
    ],
  };
}

t.test('the served document is valid OpenAPI 3.1', async (t) => {
  const { api } = await startApi(t);
  const doc = (await raw(api.url, 'GET', '/v1/openapi.json')).json() as Record<string, unknown>;
  const result = await new Validator().validate(doc);
  t.same(result.errors ?? [], [], 'no schema violations');
  t.ok(result.valid);
  t.equal(doc.openapi, '3.1.0');
  // Every component schema compiles under strict Ajv (no unknown keywords, no required name without a property).
  const compile = compiler(doc);
  for (const name of Object.keys((doc.components as any).schemas))
    t.doesNotThrow(() => compile({ $ref: `#/components/schemas/${name}` }), `${name} compiles strictly`);
  // Every object says whether it is closed or open: an unstated one would let undocumented fields through.
  const unstated: string[] = [];
  const walk = (schema: unknown, at: string): void => {
    if (Array.isArray(schema)) return schema.forEach((s, i) => walk(s, `${at}/${i}`));
    if (schema === null || typeof schema !== 'object') return;
    const o = schema as Record<string, unknown>;
    if ((o.type === 'object' || 'properties' in o) && !('additionalProperties' in o)) unstated.push(at);
    for (const [k, v] of Object.entries(o)) if (k !== 'enum' && k !== 'const') walk(v, `${at}/${k}`);
  };
  walk((doc.components as any).schemas, '#/components/schemas');
  walk(doc.paths, '#/paths');
  t.same(unstated, [], 'every object schema states additionalProperties');
});

t.test('every route answers only what its OpenAPI schema allows (real requests, every route)', async (t) => {
  const { api, node } = await startApi(t);
  node.benchStepMs = 1;
  // A peer as the cluster actor reports one (src/actors/cluster/worker.ts `peers`), so the list is not empty.
  const heardAt = Date.now();
  node.peerList = [
    {
      address: '10.77.0.9:52516',
      id: 'node-x',
      nodeId: 'node-x',
      reason: 'auth-failure',
      detail: 'wrong secret',
      via: 'static',
      at: heardAt,
      lastHeardAt: heardAt,
      attempts: 2,
      nextRetryAt: heardAt + 20_000,
    },
    {
      address: '10.77.0.10:52516',
      reason: 'unreachable',
      detail: 'ECONNREFUSED',
      via: 'mdns',
      at: heardAt,
      lastHeardAt: heardAt,
    },
    // A keyed node heard by an open one (src/actors/cluster/transport/heard.ts): the document once lacked this reason.
    {
      address: '10.77.0.11:52516',
      reason: 'auth-required',
      detail: 'the peer needs the cluster key',
      via: 'gossip',
      at: heardAt,
      lastHeardAt: heardAt,
    },
  ];
  const doc = (await raw(api.url, 'GET', '/v1/openapi.json')).json() as any;
  const compile = compiler(doc);
  let benchId = '';
  const routes = [...new Set(apiRoutes().map((r) => `${r.method} ${openApiPath(r.path)}`))];
  const table = plans(() => benchId);
  t.same(
    routes.filter((r) => !(r in table)),
    [],
    'a request plan for every route',
  );
  for (const route of Object.keys(table)) {
    const [method, template] = route.replace(/#.*$/, '').split(' ') as [string, string];
    for (const call of table[route]!) {
      const path = call.path;
      const res =
        template === '/v1/events' && call.status === 200
          ? await rawHead(api.url, path, AUTH)
          : await raw(api.url, method, path, call.body, call.headers);
      const where = `${method} ${path}${call.body ? ` ${call.body.slice(0, 60)}` : ''} → ${res.status}`;
      t.equal(res.status, call.status, `${where}: the planned status (${res.text.slice(0, 200)})`);
      if (route === 'POST /v1/bench/ring' && res.status === 202) {
        benchId = (res.json() as { id: string }).id;
        await new Promise((r) => setTimeout(r, 100)); // let it finish, so GET shows a run with its result
      }
      checkAnswer(t, doc, compile, method, template, res, where);
    }
  }
});
