import t from 'tap';
import { getJson, raw, sendJson, startApi } from './fixtures/harness.js';

const GiB = 2 ** 30;
const workload = { id: 'llama-8b', memoryBytes: 4 * GiB, layers: 32 };

t.test('identity and cluster views', async (t) => {
  const { api, node } = await startApi(t);
  const id = await getJson(api.url, '/node_id');
  t.equal(id.status, 200);
  t.equal(id.body, 'node-a', '/node_id is the id as a JSON string');

  const self = await getJson(api.url, '/v1/node');
  t.equal(self.status, 200);
  t.match(self.body, { id: 'node-a', name: 'host-node-a', role: 'leader', incarnation: 1, version: String });
  t.type(self.body.uptimeMs, 'number');

  const state = await getJson(api.url, '/v1/state');
  t.equal(state.body.lastIndex, node.cluster.lastIndex);
  t.match(state.body.digest, /^[0-9a-f]{64}$/);
  t.same(Object.keys(state.body.state.nodes).sort(), ['node-a', 'node-b', 'node-c']);

  const topo = await getJson(api.url, '/v1/topology');
  t.equal(topo.body.nodes.length, 3);
  t.equal(topo.body.links.length, 12, '3 nodes × 2 peers × 2 addresses');
  t.match(topo.body.links[0], {
    source: String,
    sink: String,
    ip: String,
    type: String,
    rttMs: Number,
    bandwidthBps: Number,
    measuredAt: Number,
  });
  t.match(
    topo.body.nodes.find((n: { id: string }) => n.id === 'node-a'),
    { role: 'leader', memory: { ramTotal: 16 * GiB } },
  );

  node.peerList = [
    { address: '10.77.0.9:52515', id: 'stranger', reason: 'other-cluster', detail: 'cluster hash 1234' },
  ];
  const peers = await getJson(api.url, '/v1/peers');
  t.same(peers.body, { peers: node.peerList });
});

t.test('probe handler is mounted first; /node_id falls back to the facade', async (t) => {
  const { api } = await startApi(t, {
    probeHandler: (req, res) => {
      if (req.url !== '/node_id') return false;
      res.writeHead(200, { 'content-type': 'application/json', 'x-probe': 'yes' });
      res.end(JSON.stringify('from-probe'));
      return true;
    },
  });
  const res = await getJson(api.url, '/node_id');
  t.equal(res.body, 'from-probe');
  t.equal(res.headers.get('x-probe'), 'yes');
  t.equal((await getJson(api.url, '/v1/node')).status, 200, 'other routes still served');
});

t.test('instances: preview, create, list, get, delete', async (t) => {
  const { api, node } = await startApi(t);
  const preview = await sendJson(api.url, 'POST', '/v1/placements/preview', { workload });
  t.equal(preview.status, 200);
  t.ok(preview.body.previews.length > 0);

  const created = await sendJson(api.url, 'POST', '/v1/instances', { workload, sharding: 'pipeline', backend: 'ring' });
  t.equal(created.status, 201);
  t.equal(created.headers.get('location'), `/v1/instances/${created.body.id}`);
  t.same(created.body.nodes, ['node-a', 'node-b', 'node-c']);
  t.same(
    created.body.runners.map((r: { status: string }) => r.status),
    ['Ready', 'Ready', 'Ready'],
  );
  t.equal(created.body.workload.kind, 'ring', 'kind defaults to ring');

  const list = await getJson(api.url, '/v1/instances');
  t.same(
    list.body.instances.map((i: { id: string }) => i.id),
    [created.body.id],
  );
  const one = await getJson(api.url, `/v1/instances/${created.body.id}`);
  t.equal(one.status, 200);
  t.same(
    one.body.runners.map((r: { node: string; rank: number }) => [r.node, r.rank]),
    [
      ['node-a', 0],
      ['node-b', 1],
      ['node-c', 2],
    ],
  );

  const del = await raw(api.url, 'DELETE', `/v1/instances/${created.body.id}`);
  t.equal(del.status, 200);
  t.same(del.json(), { deleted: created.body.id });
  t.equal((await getJson(api.url, `/v1/instances/${created.body.id}`)).status, 404);
  const again = await raw(api.url, 'DELETE', `/v1/instances/${created.body.id}`);
  t.equal(again.status, 404);
  t.match(again.json(), { error: { code: 'TORUS_INSTANCE_UNKNOWN', message: /no instance/ } });
  t.equal(node.cluster.instances[created.body.id], undefined);
});

t.test('planner refusal is a 409 with the reason; no leader is a 503 with Retry-After', async (t) => {
  const { api, node } = await startApi(t);
  const refused = await sendJson(api.url, 'POST', '/v1/instances', {
    workload: { ...workload, memoryBytes: 1000 * GiB },
  });
  t.equal(refused.status, 409);
  t.match(refused.body, {
    error: { code: 'TORUS_PLACEMENT_REFUSED', message: /memory/, details: { reasons: [{ why: 'memory' }] } },
  });

  node.leaderId = undefined;
  const noLeader = await sendJson(api.url, 'POST', '/v1/instances', { workload });
  t.equal(noLeader.status, 503);
  t.equal(noLeader.headers.get('retry-after'), '2');
  t.match(noLeader.body, { error: { code: 'TORUS_NO_LEADER' } });
  t.equal((await getJson(api.url, '/v1/node')).body.role, 'candidate');
});

t.test('exec workloads need a command', async (t) => {
  const { api } = await startApi(t);
  const bad = await sendJson(api.url, 'POST', '/v1/instances', { workload: { ...workload, kind: 'exec' } });
  t.equal(bad.status, 400);
  t.match(bad.body.error, { code: 'TORUS_API_VALIDATION', details: { where: 'body', path: 'workload.command' } });
  const ok = await sendJson(api.url, 'POST', '/v1/instances', {
    workload: { ...workload, kind: 'exec', command: '/bin/true', args: ['x'], env: { A: '1' } },
  });
  t.equal(ok.status, 201);
  t.match(ok.body.workload, { kind: 'exec', command: '/bin/true' });
});

t.test('unknown routes 404, wrong methods 405 with Allow', async (t) => {
  const { api } = await startApi(t);
  const missing = await raw(api.url, 'GET', '/v1/nope');
  t.equal(missing.status, 404);
  t.match(missing.json(), { error: { code: 'TORUS_API_NOT_FOUND', message: String } });
  t.equal((await raw(api.url, 'GET', '/v1/instances/a/b')).status, 404);
  const wrong = await raw(api.url, 'PUT', '/v1/instances');
  t.equal(wrong.status, 405);
  t.equal(wrong.headers.allow, 'POST, GET');
  t.match(wrong.json(), { error: { code: 'TORUS_API_METHOD_NOT_ALLOWED' } });
  t.equal((await raw(api.url, 'DELETE', '/v1/node')).status, 405);
  t.equal((await raw(api.url, 'POST', '/metrics', '{}')).status, 405);
  const head = await raw(api.url, 'HEAD', '/v1/node');
  t.equal(head.status, 200, 'HEAD is answered like GET');
  t.equal(head.text, '');
});

t.test('CORS only for the dashboard origin', async (t) => {
  const { api } = await startApi(t, { corsOrigins: ['http://dash.example:8080'] });
  const same = await raw(api.url, 'GET', '/v1/node', undefined, { origin: api.url });
  t.equal(same.status, 200, 'same origin (the served dashboard) passes');
  t.equal(same.headers['access-control-allow-origin'], undefined);
  const allowed = await raw(api.url, 'GET', '/v1/node', undefined, { origin: 'http://dash.example:8080' });
  t.equal(allowed.headers['access-control-allow-origin'], 'http://dash.example:8080');
  const pre = await raw(api.url, 'OPTIONS', '/v1/instances', undefined, {
    origin: 'http://dash.example:8080',
    'access-control-request-method': 'POST',
  });
  t.equal(pre.status, 204);
  t.match(pre.headers['access-control-allow-methods'], /POST/);
  const foreign = await raw(api.url, 'POST', '/v1/instances', JSON.stringify({ workload }), {
    origin: 'http://evil.example',
  });
  t.equal(foreign.status, 403, 'a foreign page cannot place work');
  t.match(foreign.json(), { error: { code: 'TORUS_ORIGIN_REFUSED' } });
  t.equal((await raw(api.url, 'GET', '/v1/state', undefined, { origin: 'http://evil.example' })).status, 403);
});

t.test('metrics in the Prometheus text format', async (t) => {
  const { api, node } = await startApi(t);
  await sendJson(api.url, 'POST', '/v1/instances', { workload, instanceId: 'inst-x' });
  const res = await raw(api.url, 'GET', '/metrics');
  t.equal(res.status, 200);
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const lines = res.text.trim().split('\n');
  for (const line of lines.filter((l) => /^(# (HELP|TYPE) )?torus_/.test(l))) {
    if (line.startsWith('#')) t.match(line, /^# (HELP|TYPE) torus_\w+ /);
    else t.match(line, /^torus_\w+(\{(\w+="(?:[^"\\]|\\.)*",?)*\})? (-?[\d.e+-]+|NaN)$/, `sample line: ${line}`);
  }
  t.ok(lines.includes(`torus_event_index ${node.cluster.lastIndex}`));
  t.ok(
    lines.includes(
      'torus_link_bandwidth_bytes_per_second{source="node-a",sink="node-b",ip="10.77.1.2",type="thunderbolt"} 2500000000',
    ),
  );
  t.ok(lines.includes('torus_link_rtt_seconds{source="node-a",sink="node-b",ip="10.77.0.2",type="ethernet"} 0.0006'));
  t.ok(lines.includes('torus_runner_state{instance="inst-x",node="node-b",rank="1",state="Ready"} 1'));
  t.ok(lines.includes('torus_actor_restarts_total{actor="placement-planner"} 1'));
  t.ok(lines.some((l) => l.startsWith('torus_node_info{id="node-a",name="host-node-a"')));
});

t.test('ring benchmark: 202, progress and the result on the run', async (t) => {
  const { api } = await startApi(t);
  const started = await sendJson(api.url, 'POST', '/v1/bench/ring', {
    nodes: ['node-a', 'node-b'],
    minBytes: 8,
    maxBytes: 64,
  });
  t.equal(started.status, 202);
  t.match(started.body, { id: String, status: 'running' });
  t.equal(started.headers.get('location'), `/v1/bench/ring/${started.body.id}`);
  let run: any;
  for (let i = 0; i < 100; i++) {
    run = (await getJson(api.url, `/v1/bench/ring/${started.body.id}`)).body;
    if (run.status !== 'running') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(run.status, 'done');
  t.match(run.progress, { done: 4, total: 4 });
  t.equal(run.result.rows.length, 4);
  const unknown = await sendJson(api.url, 'POST', '/v1/bench/ring', { nodes: ['node-a', 'ghost'] });
  t.equal(unknown.status, 404);
  t.match(unknown.body.error, { code: 'TORUS_NODE_UNKNOWN', details: { path: 'nodes[1]' } });
  t.equal((await getJson(api.url, '/v1/bench/ring/nope')).status, 404);
});
