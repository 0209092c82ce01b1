/**
 * API side: what a stranger can make the HTTP API hold is bounded — connections (total and per client
 * address, excess closed at once), idle and slow-body sockets (headers/request timeouts, SSE not cut), SSE clients,
 * and the rate of expensive writes. Each limit is counted in /metrics. Loopback only: other client addresses are
 * 127.0.0.x (all of 127/8 is loopback on Linux), so a legitimate client is not the flooding one.
 */
import t from 'tap';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { AUTH, raw, startApi } from './fixtures/harness.js';

const GiB = 2 ** 30;
const workload = { id: 'llama-8b', memoryBytes: 4 * GiB, layers: 32 };

/** Opens `n` idle sockets from `localAddress`; resolves with them once each connected or was closed. */
async function idleSockets(
  port: number,
  n: number,
  localAddress: string,
): Promise<{ sockets: Socket[]; closed: () => number }> {
  let closed = 0;
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve) => {
          const s = connect({ port, host: '127.0.0.1', localAddress });
          s.on('error', () => undefined);
          s.resume(); // read, so a close by the server is seen here (the 408 of a timed-out socket is discarded)
          s.once('close', () => {
            closed++;
          });
          s.once('connect', () => resolve(s));
          s.once('close', () => resolve(s));
        }),
    ),
  );
  return { sockets, closed: () => closed };
}

/** GET from a chosen client address (fetch cannot pick one). */
async function getFrom(
  port: number,
  path: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<number> {
  return (await textFrom(port, path, localAddress, headers)).status;
}

function textFrom(
  port: number,
  path: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, localAddress, headers, agent: false, timeout: 10_000 },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function until(what: string, fn: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The /metrics count of one limit, read from a client address that is not flooding (127.0.0.9). */
const rejections = async (port: number, limit: string): Promise<number> => {
  const { text } = await textFrom(port, '/metrics', '127.0.0.9', AUTH);
  const m = new RegExp(`^torus_limit_rejections_total\\{limit="${limit}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : -1;
};

t.test('600 idle sockets from one address: the excess is closed at once, the node keeps answering', async (t) => {
  const { api } = await startApi(t); // the defaults: 512 total, 64 per address
  const flood = await idleSockets(api.port, 600, '127.0.0.1');
  t.teardown(() => flood.sockets.forEach((s) => s.destroy()));
  await until('the excess sockets to be closed', () => flood.closed() >= 600 - 64, 10_000);
  t.equal(flood.closed(), 600 - 64, 'all but 64 (--max-http-connections-per-ip) closed at once');
  t.equal(await getFrom(api.port, '/node_id', '127.0.0.2'), 200, '/node_id answers another client');
  t.equal(await getFrom(api.port, '/v1/node', '127.0.0.2', AUTH), 200, 'an authenticated /v1/node too');
  t.equal(await rejections(api.port, 'http-connections-per-ip'), 600 - 64, 'counted in /metrics');
});

t.test('the total cap holds across addresses; idle sockets are closed by the headers timeout', async (t) => {
  const { api } = await startApi(t, {
    limits: { maxConnections: 20, maxConnectionsPerIp: 8, headersTimeoutMs: 600, requestTimeoutMs: 1_000 },
  });
  const floods = await Promise.all(
    ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'].map((a) => idleSockets(api.port, 8, a)),
  );
  t.teardown(() => floods.forEach((f) => f.sockets.forEach((s) => s.destroy())));
  const closed = (): number => floods.reduce((n, f) => n + f.closed(), 0);
  await until('the sockets over the total cap to be closed', () => closed() >= 12, 5_000);
  t.equal(closed(), 12, 'the 12 sockets over the total cap (20) closed at once');
  await until('the idle sockets to be closed by the headers timeout', () => closed() === 32, 10_000);
  t.pass('the 20 accepted idle sockets were closed by the headers timeout');
  t.equal(await rejections(api.port, 'http-connections'), 12, 'counted as http-connections rejections');
  t.equal(await getFrom(api.port, '/v1/node', '127.0.0.2', AUTH), 200, 'answers again once the idle sockets are gone');
});

t.test('a slow body is cut by the request timeout; an SSE stream is not', async (t) => {
  const { api } = await startApi(t, { limits: { headersTimeoutMs: 500, requestTimeoutMs: 1_000 }, heartbeatMs: 150 });
  const slow = connect(api.port, '127.0.0.1');
  slow.on('error', () => undefined);
  let answer = '';
  slow.on('data', (d: Buffer) => {
    answer += d.toString();
  });
  const closedAt = new Promise<number>((resolve) => slow.once('close', () => resolve(Date.now())));
  const start = Date.now();
  slow.write(
    `POST /v1/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH.authorization}\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{`,
  );
  const drip = setInterval(() => slow.write(' '), 100);
  t.teardown(() => {
    clearInterval(drip);
    slow.destroy();
  });
  const took = (await closedAt) - start;
  clearInterval(drip);
  t.ok(took < 8_000, `the slow upload was cut after ${took} ms (request timeout 1 s)`);
  t.match(answer, /^HTTP\/1\.1 408/, 'with 408 Request Timeout');

  const abort = new AbortController();
  t.teardown(() => abort.abort());
  const res = await fetch(`${api.url}/v1/events`, { headers: AUTH, signal: abort.signal });
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  const streamStart = Date.now();
  let beats = 0;
  while (Date.now() - streamStart < 2_500) {
    const { value, done } = await reader.read();
    if (done) break;
    beats += (
      Buffer.from(value)
        .toString()
        .match(/: heartbeat/g) ?? []
    ).length;
  }
  t.ok(Date.now() - streamStart >= 2_500, 'the stream outlived the 1 s request timeout');
  t.ok(beats >= 3, `and kept delivering (${beats} heartbeats)`);
});

t.test('SSE clients are capped (503 TORUS_LIMIT_REACHED); a freed slot is reused', async (t) => {
  const { api } = await startApi(t, { limits: { maxSseClients: 2 } });
  const streams = [new AbortController(), new AbortController()];
  t.teardown(() => streams.forEach((s) => s.abort()));
  for (const s of streams)
    t.equal((await fetch(`${api.url}/v1/events`, { headers: AUTH, signal: s.signal })).status, 200);
  const third = await raw(api.url, 'GET', '/v1/events');
  t.equal(third.status, 503, 'the third stream is refused');
  t.match(third.json(), { error: { code: 'TORUS_LIMIT_REACHED', details: { limit: 'sse-clients', max: 2 } } });
  t.equal(await rejections(api.port, 'sse-clients'), 1);
  streams[0]!.abort();
  const again = new AbortController();
  t.teardown(() => again.abort());
  await until(
    'a freed slot',
    async () =>
      (await fetch(`${api.url}/v1/events`, { headers: AUTH, signal: again.signal }).catch(() => ({ status: 0 })))
        .status === 200,
    5_000,
  );
  t.pass('a new stream is accepted once one closed');
});

t.test('create / measure / bench are rate-limited per client (429 with Retry-After)', async (t) => {
  const { api, node } = await startApi(t, { limits: { maxWriteRate: 3 } });
  for (let i = 0; i < 3; i++)
    t.equal(
      (await raw(api.url, 'POST', '/v1/instances', JSON.stringify({ workload, instanceId: `i${i}` }))).status,
      201,
      `create ${i + 1} of 3`,
    );
  const before = Object.keys(node.cluster.instances).length;
  for (const path of ['/v1/instances', '/v1/links/measure', '/v1/bench/ring']) {
    const res = await raw(
      api.url,
      'POST',
      path,
      JSON.stringify(path === '/v1/instances' ? { workload, instanceId: 'over' } : {}),
    );
    t.equal(res.status, 429, `POST ${path} over the rate`);
    t.match(res.json(), { error: { code: 'TORUS_RATE_LIMITED', details: { limit: 'write-rate', perMinute: 3 } } });
    t.ok(Number(res.headers['retry-after']) >= 1, `Retry-After ${res.headers['retry-after']}`);
  }
  t.equal(Object.keys(node.cluster.instances).length, before, 'nothing created over the rate');
  t.equal((await raw(api.url, 'GET', '/v1/instances')).status, 200, 'reads are not rate-limited');
  t.equal(await getFrom(api.port, '/v1/node', '127.0.0.2', AUTH), 200);
  t.equal(await rejections(api.port, 'write-rate'), 3);
});
