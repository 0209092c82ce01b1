/**
 * Nobody in, API side: every route but GET /node_id needs the bearer token or a dashboard session; the
 * Host and Origin checks run before any route (probe routes included); env values never leave the node.
 * Loopback only: a real API server over the in-process node (test/api/fixtures).
 */
import t from 'tap';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readSse } from '../../src/cli/sse-client.js';
import { ApiAuth, SESSION_TTL_MS } from '../../src/api/auth.js';
import { AUTH, raw, startApi, TEST_TOKEN } from './fixtures/harness.js';

const GiB = 2 ** 30;
const workload = { id: 'llama-8b', memoryBytes: 4 * GiB, layers: 32 };
const NONE = { authorization: '' };

/** A stand-in probe route that records whether it was reached (the real one belongs to the profiler). */
function probeSpy(): { handler: (req: IncomingMessage, res: ServerResponse) => boolean; hits: string[] } {
  const hits: string[] = [];
  return {
    hits,
    handler: (req, res) => {
      if (!req.url?.startsWith('/v1/probe/')) return false;
      hits.push(req.url);
      res.writeHead(200).end('probe');
      return true;
    },
  };
}

t.test('without a token: 401 on every route but /node_id, nothing changes, nothing revealed', async (t) => {
  const { api, node } = await startApi(t);
  const before = node.cluster.lastIndex;
  const rce = await raw(
    api.url,
    'POST',
    '/v1/instances',
    JSON.stringify({ workload: { ...workload, kind: 'exec', command: 'sh', args: ['-c', 'touch /tmp/pwned'] } }),
    NONE,
  );
  t.equal(rce.status, 401, 'the RCE request of the issue is refused');
  t.same(
    rce.json(),
    {
      error: {
        code: 'TORUS_UNAUTHENTICATED',
        message: String(rce.json() && (rce.json() as any).error.message),
        details: {},
      },
    },
    'the one error shape, no details',
  );
  t.equal(rce.headers['www-authenticate'], 'Bearer realm="torus"');
  t.notMatch(rce.text, /node-a|leader|llama/, 'no node id, role or state in the answer');
  t.equal(node.cluster.lastIndex, before, 'nothing was applied');
  t.same(Object.keys(node.cluster.instances), [], 'no instance in the state');

  const routes: Array<[string, string, string?]> = [
    ['GET', '/v1/node'],
    ['GET', '/v1/state'],
    ['GET', '/v1/topology'],
    ['GET', '/v1/peers'],
    ['GET', '/v1/events'],
    ['GET', '/metrics'],
    ['GET', '/v1/instances'],
    ['GET', '/v1/instances/x'],
    ['DELETE', '/v1/instances/x'],
    ['GET', '/v1/openapi.json'],
    ['POST', '/v1/placements/preview', JSON.stringify({ workload })],
    ['POST', '/v1/bench/ring', '{}'],
    ['POST', '/v1/links/measure', '{}'],
    ['GET', '/v1/bench/ring/x'],
    ['GET', '/dashboard/app.js'],
    ['GET', '/no/such/route'],
    ['PUT', '/v1/node'],
  ];
  for (const [method, path, body] of routes) {
    const res = await raw(api.url, method, path, body, NONE);
    t.equal(res.status, 401, `${method} ${path} without a token`);
    t.match(res.json(), { error: { code: 'TORUS_UNAUTHENTICATED' } });
    const wrong = await raw(api.url, method, path, body, { authorization: `Bearer ${TEST_TOKEN}x` });
    t.equal(wrong.status, 401, `${method} ${path} with a wrong token`);
  }
  for (const header of [
    `Basic ${TEST_TOKEN}`,
    TEST_TOKEN,
    'Bearer',
    `Bearer ${TEST_TOKEN.slice(0, -1)}`,
    `Bearer  ${TEST_TOKEN} x`,
  ]) {
    t.equal(
      (await raw(api.url, 'GET', '/v1/state', undefined, { authorization: header })).status,
      401,
      `Authorization: ${header.slice(0, 12)}… is refused`,
    );
  }
  t.equal(
    (await raw(api.url, 'GET', '/v1/state', undefined, { authorization: `bearer ${TEST_TOKEN}` })).status,
    200,
    'the scheme is case-insensitive',
  );
  const id = await raw(api.url, 'GET', '/node_id', undefined, NONE);
  t.equal(id.status, 200, 'GET /node_id stays open (the identity probe)');
  t.equal(node.cluster.lastIndex, before, 'still nothing applied');
});

t.test('/v1/node says which security mode is in force; open mode lets everyone in, loudly', async (t) => {
  const secret = await startApi(t, { auth: { mode: 'token', token: TEST_TOKEN, secretSource: 'env' } });
  const info = (await raw(secret.api.url, 'GET', '/v1/node')).json() as { security: unknown };
  t.same(info.security, { mode: 'secret', secretSource: 'env' });
  t.notMatch(JSON.stringify(info), TEST_TOKEN, 'the token is not in the answer');

  const open = await startApi(t, { auth: { mode: 'open' } });
  const res = await raw(open.api.url, 'GET', '/v1/node', undefined, NONE);
  t.equal(res.status, 200, 'open mode: no credentials needed');
  t.match(res.json(), { security: { mode: 'open', warning: /insecure-open/ } });
  t.equal((await raw(open.api.url, 'POST', '/v1/instances', JSON.stringify({ workload }), NONE)).status, 201);
  const page = await raw(open.api.url, 'GET', '/', undefined, NONE);
  t.match(page.text, /<svg id="topology"/, 'open mode: the dashboard itself, no sign-in');
});

t.test('dashboard: /?token= starts an HttpOnly SameSite=Strict session and drops the token from the URL', async (t) => {
  const { api } = await startApi(t);
  const login = await raw(api.url, 'GET', '/', undefined, NONE);
  t.equal(login.status, 200);
  t.match(login.text, /data-testid="login"/, 'without a session, / is the sign-in form');
  t.notMatch(login.text, /id="topology"|node-a/, 'not the dashboard, nothing about the node');
  t.equal((await raw(api.url, 'GET', '/login', undefined, NONE)).status, 200, '/login is the same form');

  const wrong = await raw(api.url, 'GET', `/?token=${TEST_TOKEN}x`, undefined, NONE);
  t.equal(wrong.status, 401, 'a wrong token in the URL');
  t.equal(wrong.headers['set-cookie'], undefined, 'no session for a wrong token');
  t.match(wrong.text, /not this cluster/);

  const ok = await raw(api.url, 'GET', `/?token=${encodeURIComponent(TEST_TOKEN)}`, undefined, NONE);
  t.equal(ok.status, 303);
  t.equal(ok.headers.location, '/', 'redirected to / without the token');
  const setCookie = String(ok.headers['set-cookie']);
  const m = /^torus_session=([A-Za-z0-9_.-]{60,}); HttpOnly; SameSite=Strict; Path=\/; Max-Age=\d+$/.exec(setCookie);
  t.ok(m, `Set-Cookie is an HttpOnly SameSite=Strict session: ${setCookie}`);
  t.notMatch(setCookie, TEST_TOKEN, 'the cookie is not the token');
  const cookie = { ...NONE, cookie: `other=1; torus_session=${m?.[1]}` };

  const page = await raw(api.url, 'GET', '/', undefined, cookie);
  t.match(page.text, /id="topology"/, 'with the session, / is the dashboard');
  t.equal((await raw(api.url, 'GET', '/v1/state', undefined, cookie)).status, 200, 'the session works on the API');
  t.equal((await raw(api.url, 'GET', '/dashboard/app.js', undefined, cookie)).status, 200);
  t.equal(
    (
      await raw(api.url, 'GET', '/v1/state', undefined, {
        ...NONE,
        cookie: 'torus_session=forged-session-id-0123456789',
      })
    ).status,
    401,
    'a forged session id',
  );
  t.equal(
    (await raw(api.url, 'GET', '/v1/state', undefined, { ...NONE, cookie: `torus_session=${TEST_TOKEN}` })).status,
    401,
    'the token itself is not a session',
  );

  const sameToken = await startApi(t);
  t.equal(
    (await raw(sameToken.api.url, 'GET', '/v1/state', undefined, cookie)).status,
    200,
    'the session outlives a restart (same token: the open dashboard reconnects)',
  );
  const otherToken = await startApi(t, { auth: { mode: 'token', token: 'tt_another-cluster-token-0123456789' } });
  t.equal(
    (await raw(otherToken.api.url, 'GET', '/v1/state', undefined, cookie)).status,
    401,
    'a new token (rotated secret) ends every session',
  );
  const [id, expiry, mac] = m![1]!.split('.');
  const later = `torus_session=${id}.${(parseInt(expiry!, 36) + 86_400_000).toString(36)}.${mac}`;
  t.equal(
    (await raw(api.url, 'GET', '/v1/state', undefined, { ...NONE, cookie: later })).status,
    401,
    'an expiry moved by the client breaks the signature',
  );

  const formWrong = await raw(api.url, 'POST', '/login', 'token=nope', {
    ...NONE,
    'content-type': 'application/x-www-form-urlencoded',
  });
  t.equal(formWrong.status, 401, 'the login form with a wrong token');
  const form = await raw(api.url, 'POST', '/login', `token=${encodeURIComponent(TEST_TOKEN)}`, {
    ...NONE,
    'content-type': 'application/x-www-form-urlencoded',
  });
  t.equal(form.status, 303, 'the login form with the token');
  t.match(String(form.headers['set-cookie']), /^torus_session=[^;]+; HttpOnly; SameSite=Strict; Path=\//);
});

t.test('Host check first: a rebinding Host is refused (421) before any route, probe routes included', async (t) => {
  const spy = probeSpy();
  const { api } = await startApi(t, {
    probeHandler: spy.handler,
    allowedHosts: ['torus.lan'],
    interfaceAddresses: () => ['10.77.9.9', 'fe80::1'],
  });
  const port = api.port;
  for (const [method, path] of [
    ['GET', '/node_id'],
    ['GET', '/v1/node'],
    ['POST', '/v1/instances'],
    ['GET', '/v1/probe/source?bytes=10'],
    ['GET', '/'],
    ['GET', '/nope'],
  ]) {
    const res = await raw(api.url, method!, path!, method === 'POST' ? JSON.stringify({ workload }) : undefined, {
      host: `evil:${port}`,
      origin: `http://evil:${port}`,
    });
    t.equal(res.status, 421, `${method} ${path} with Host evil:${port} (Origin = Host: the old check let it pass)`);
    t.same(res.json(), {
      error: {
        code: 'TORUS_HOST_REFUSED',
        message: (res.json() as any).error.message,
        details: { where: 'headers', path: 'host' },
      },
    });
  }
  t.same(spy.hits, [], 'the probe route was never reached');
  for (const host of [
    `localhost:${port}`,
    `127.0.0.1:${port}`,
    `[::1]:${port}`,
    `10.77.9.9:${port}`,
    `[fe80::1]:${port}`,
    `[fe80::1%lan0]:${port}`,
    `torus.lan:${port}`,
    'TORUS.LAN',
    `127.0.0.1`,
  ]) {
    t.equal((await raw(api.url, 'GET', '/v1/node', undefined, { host })).status, 200, `Host ${host} names this node`);
  }
  for (const host of ['10.77.9.10', 'torus.lan.evil.example', 'evil@127.0.0.1', '127.0.0.1.nip.io']) {
    t.equal(
      (await raw(api.url, 'GET', '/node_id', undefined, { host })).status,
      421,
      `Host ${JSON.stringify(host)} is refused`,
    );
  }
  t.equal(
    (await raw(api.url, 'GET', '/v1/probe/source?bytes=10', undefined, { host: `10.77.9.9:${port}` })).status,
    200,
    'a peer dialling our address reaches the probe',
  );
});

t.test('a foreign Origin is refused (403) on every route, probe routes included', async (t) => {
  const spy = probeSpy();
  const { api } = await startApi(t, { probeHandler: spy.handler, corsOrigins: ['http://dash.example:8080'] });
  for (const [method, path] of [
    ['GET', '/node_id'],
    ['GET', '/v1/node'],
    ['GET', '/v1/state'],
    ['POST', '/v1/instances'],
    ['GET', '/v1/probe/source?bytes=10'],
    ['GET', '/'],
    ['POST', '/login'],
  ]) {
    for (const origin of ['http://evil.example', `http://localhost:${api.port + 1}`, 'null']) {
      const res = await raw(api.url, method!, path!, method === 'POST' ? JSON.stringify({ workload }) : undefined, {
        origin,
      });
      t.equal(res.status, 403, `${method} ${path} from Origin ${origin}`);
      t.match(res.json(), { error: { code: 'TORUS_ORIGIN_REFUSED' } });
    }
  }
  t.same(spy.hits, []);
  t.equal(
    (await raw(api.url, 'GET', '/v1/node', undefined, { origin: api.url })).status,
    200,
    'the dashboard origin (same origin) passes',
  );
  t.equal(
    (await raw(api.url, 'GET', '/v1/node', undefined, { origin: 'http://dash.example:8080' })).headers[
      'access-control-allow-origin'
    ],
    'http://dash.example:8080',
  );
});

t.test('env values never appear in any API answer or event', async (t) => {
  const { api } = await startApi(t);
  const env = { SECRET_X: 'hunter2', HF_TOKEN: 'hf_hunter2_abc' };
  const created = await raw(
    api.url,
    'POST',
    '/v1/instances',
    JSON.stringify({
      workload: { ...workload, kind: 'exec', command: 'python3', args: ['job.py'], env },
      instanceId: 'job',
    }),
  );
  t.equal(created.status, 201, created.text);
  t.notMatch(created.text, 'hunter2', 'not in the create answer');
  t.same(
    (created.json() as any).workload.env,
    { SECRET_X: '[redacted]', HF_TOKEN: '[redacted]' },
    'names kept, values redacted',
  );
  for (const path of [
    '/v1/instances',
    '/v1/instances/job',
    '/v1/state',
    '/v1/topology',
    '/v1/node',
    '/metrics',
    '/v1/peers',
  ]) {
    const res = await raw(api.url, 'GET', path);
    t.equal(res.status, 200, path);
    t.notMatch(res.text, 'hunter2', `not in ${path}`);
  }
  t.match((await raw(api.url, 'GET', '/v1/state')).text, /SECRET_X/, 'the names are shown');
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 3_000);
  let text = '';
  for await (const item of readSse(`${api.url}/v1/events`, { headers: AUTH, signal: abort.signal })) {
    if ('data' in item) text += item.data;
    if (text.includes('InstanceCreated') && text.includes('RunnerStatusChanged')) break;
  }
  clearTimeout(timer);
  abort.abort();
  t.match(text, /InstanceCreated/, 'the event stream carried the creation');
  t.notMatch(text, 'hunter2', 'not in the event stream');
  const dup = await raw(
    api.url,
    'POST',
    '/v1/instances',
    JSON.stringify({ workload: { ...workload, kind: 'exec', command: 'python3', env, layers: -1 } }),
  );
  t.equal(dup.status, 400);
  t.notMatch(dup.text, 'hunter2', 'not in an error answer either');
});

t.test('a session ends at its expiry', async (t) => {
  let now = 1_000_000;
  const auth = new ApiAuth({ mode: 'token', token: TEST_TOKEN }, () => now);
  const value = /^torus_session=([^;]+)/.exec(auth.startSession())![1]!;
  const req = { headers: { cookie: `torus_session=${value}` } } as unknown as IncomingMessage;
  t.ok(auth.authenticated(req), 'live');
  now += SESSION_TTL_MS - 1;
  t.ok(auth.authenticated(req), 'still live just before its expiry');
  now += 2;
  t.notOk(auth.authenticated(req), 'expired');
});
