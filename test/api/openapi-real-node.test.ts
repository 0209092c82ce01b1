/**
 * The OpenAPI document against a real node (startNode with every actor, on 127.0.0.1, no mDNS): the routes that
 * need no second node or runner are called for real and each answer is checked as in openapi-live.test.ts, so
 * the shapes the actors produce (the planner's previews, the profiler's measure answer, the cluster's errors)
 * are held to the document too. Its own file: starting a whole node is slow on a loaded machine.
 */
import t from 'tap';
import { raw } from './fixtures/harness.js';
import { startLoopbackNode } from '../fixtures/loopback-node.js';
import { checkAnswer, compiler, json, rawHead, workload, type Call } from './fixtures/openapi-check.js';

// Starting every actor takes seconds on a quiet machine but minutes on a loaded shared one: more than the default.
t.setTimeout(300_000);

t.test(
  "a real node's answers match the document (all actors, loopback only, no mDNS)",
  { timeout: 280_000 },
  async (t) => {
    const { node, url, auth } = await startLoopbackNode(t);
    if (!auth.authorization) throw new Error('a node started without --insecure-open has a credential');
    const doc = (await raw(url, 'GET', '/v1/openapi.json', undefined, auth)).json() as any;
    const compile = compiler(doc);
    // Its own profile lands shortly after start; previews then hold real plans, not only refusals.
    for (let i = 0; i < 50; i++) {
      const topology = (await raw(url, 'GET', '/v1/topology', undefined, auth)).json() as {
        nodes: Array<{ memory?: unknown }>;
      };
      if (topology.nodes.some((n) => n.memory)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const calls: Array<[string, string, Call]> = [
      ['GET', '/node_id', { path: '/node_id', status: 200 }],
      ['GET', '/v1/node', { path: '/v1/node', status: 200 }],
      ['GET', '/v1/node', { path: '/v1/node', headers: { authorization: '' }, status: 401 }],
      ['GET', '/v1/state', { path: '/v1/state', status: 200 }],
      ['GET', '/v1/topology', { path: '/v1/topology', status: 200 }],
      ['GET', '/v1/peers', { path: '/v1/peers', status: 200 }],
      ['POST', '/v1/placements/preview', { path: '/v1/placements/preview', body: json({ workload }), status: 200 }],
      [
        'POST',
        '/v1/placements/preview',
        {
          path: '/v1/placements/preview',
          body: json({ workload: { ...workload, memoryBytes: 2 ** 50 } }),
          status: 200,
        },
      ],
      ['POST', '/v1/links/measure', { path: '/v1/links/measure', status: 202 }],
      ['POST', '/v1/links/measure', { path: '/v1/links/measure', body: json({ peer: 'nobody' }), status: 404 }],
      ['GET', '/v1/instances', { path: '/v1/instances', status: 200 }],
      ['GET', '/v1/instances/{id}', { path: '/v1/instances/nope', status: 404 }],
      ['DELETE', '/v1/instances/{id}', { path: '/v1/instances/nope', status: 404 }],
      [
        'POST',
        '/v1/instances',
        {
          path: '/v1/instances',
          body: json({ workload: { ...workload, memoryBytes: 2 ** 50 } }),
          status: 409,
          code: 'TORUS_PLACEMENT_REFUSED',
        },
      ],
      ['POST', '/v1/instances', { path: '/v1/instances', body: json({ workload, instanceId: 'taken' }), status: 201 }],
      [
        'POST',
        '/v1/instances',
        {
          path: '/v1/instances',
          body: json({ workload, instanceId: 'taken' }),
          status: 409,
          code: 'TORUS_INSTANCE_EXISTS',
        },
      ],
      ['DELETE', '/v1/instances/{id}', { path: '/v1/instances/taken', status: 200 }],
      ['POST', '/v1/bench/ring', { path: '/v1/bench/ring', body: json({ nodes: ['ghost'] }), status: 404 }],
      ['GET', '/v1/bench/ring/{id}', { path: '/v1/bench/ring/nope', status: 404 }],
      ['DELETE', '/v1/members/{id}', { path: '/v1/members/ghost', status: 404 }],
      [
        'DELETE',
        '/v1/members/{id}',
        { path: `/v1/members/${encodeURIComponent(node.identity.nodeId)}`, status: 409, code: 'TORUS_MEMBER_SELF' },
      ],
      ['GET', '/metrics', { path: '/metrics', status: 200 }],
      ['GET', '/v1/openapi.json', { path: '/v1/openapi.json', status: 200 }],
    ];
    for (const [method, template, call] of calls) {
      const res = await raw(url, method, call.path, call.body, { ...auth, ...call.headers });
      const where = `real node: ${method} ${call.path}${call.body ? ` ${call.body.slice(0, 60)}` : ''} → ${res.status}`;
      t.equal(res.status, call.status, `${where}: the planned status (${res.text.slice(0, 300)})`);
      if (call.code)
        t.equal((res.json() as { error?: { code?: string } }).error?.code, call.code, `${where}: ${call.code}`);
      checkAnswer(t, doc, compile, method, template, res, where);
    }
    const events = await rawHead(url, '/v1/events?after=0', auth);
    checkAnswer(t, doc, compile, 'GET', '/v1/events', events, 'real node: GET /v1/events');
  },
);
