/**
 * The connection bounds hold when the API serves TLS and plain HTTP on one port (the default once a node has its
 * certificate): there the HTTP servers never listen themselves, so Node's connection tracking behind the headers
 * and request timeouts and behind closeAllConnections has to be started for them. Without it a slow-loris upload
 * was never cut and closing the API waited for every keep-alive connection to time out on its own.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { loadNodeCert } from '../../../src/api/tls/node-cert.js';
import { AUTH, startApi } from '../fixtures/harness.js';

function nodeCert(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'torus-bounds-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return loadNodeCert({ dataDir: dir, nodeId: 'node-a' });
}

/** Milliseconds until `closed` settles, or Infinity after `ms` (the timer does not hold the process). */
function msUntil(closed: Promise<number>, ms: number): Promise<number> {
  return Promise.race([
    closed,
    new Promise<number>((resolve) => setTimeout(() => resolve(Number.POSITIVE_INFINITY), ms).unref()),
  ]);
}

const limits = { headersTimeoutMs: 500, requestTimeoutMs: 1_000 };

t.test('plain HTTP on the TLS port: a slow upload is cut by the request timeout (408)', async (t) => {
  const { api } = await startApi(t, { tls: nodeCert(t), limits });
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
  const took = await msUntil(
    closedAt.then((at) => at - start),
    8_000,
  );
  clearInterval(drip);
  t.ok(took < 8_000, `the slow upload was cut after ${took} ms (request timeout 1 s)`);
  t.match(answer, /^HTTP\/1\.1 408/, 'with 408 Request Timeout');
});

t.test(
  'TLS: a connection that finishes its handshake and then says nothing is closed by the headers timeout',
  async (t) => {
    const { api } = await startApi(t, { tls: nodeCert(t), limits });
    const idle = tlsConnect({ port: api.port, host: '127.0.0.1', rejectUnauthorized: false });
    idle.on('error', () => undefined);
    t.teardown(() => idle.destroy());
    await new Promise<void>((resolve) => idle.once('secureConnect', () => resolve()));
    const start = Date.now();
    idle.resume();
    const took = await msUntil(
      new Promise<number>((resolve) => idle.once('close', () => resolve(Date.now() - start))),
      8_000,
    );
    t.ok(took < 8_000, `closed after ${took} ms (headers timeout 0.5 s)`);
  },
);

t.test('closing the API does not wait for keep-alive connections or a request in flight', async (t) => {
  const { api } = await startApi(t, {
    tls: nodeCert(t),
    limits: { headersTimeoutMs: 20_000, requestTimeoutMs: 30_000 },
  });
  const agent = new Agent({ keepAlive: true });
  t.teardown(() => agent.destroy());
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(`${api.url}/v1/node`, { headers: AUTH, agent }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end();
  });
  t.equal(status, 200, 'a request on a keep-alive connection, now idle');
  const upload = connect(api.port, '127.0.0.1');
  upload.on('error', () => undefined);
  t.teardown(() => upload.destroy());
  upload.write(
    `POST /v1/instances HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH.authorization}\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{`,
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  const start = Date.now();
  await api.close();
  const took = Date.now() - start;
  t.ok(took < 1_000, `closed in ${took} ms (the connections' own timeouts are 20 and 30 s)`);
});
