/**
 * Probe routes refuse strangers: anonymous, forged, stale, replayed or altered proofs get 401
 * TORUS_UNAUTHENTICATED; the force header does not let an unproven caller past the one-at-a-time gate; sizes are
 * capped. The profiler's own clients (measureRtt, measureCapacity, measureThroughput) prove the key.
 */
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProbeHandler } from '../../../../src/actors/network-profiler/probes/probe-handler.js';
import {
  measureCapacity,
  measureRtt,
  measureThroughput,
} from '../../../../src/actors/network-profiler/probes/measure.js';
import { PROBE_PROOF_HEADER, probeSigner, ProofChecker } from '../../../../src/protocols/probe-proof.js';
import { MAX_ECHO_BODY_BYTES, MAX_SOURCE_BYTES, PROBE_FORCE_HEADER } from '../../../../src/protocols/probe.js';

const KEY = 'd474'.repeat(16);

async function probeServer(t: { teardown(fn: () => unknown): void }, dataKey: string | null): Promise<number> {
  const handler = createProbeHandler(() => ({ nodeId: 'node-a', clusterName: 'c1', incarnation: 7 }), { dataKey });
  const server = http.createServer((req, res) => {
    if (!handler(req, res)) {
      res.writeHead(404);
      res.end('nope');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return (server.address() as AddressInfo).port;
}

interface Answer {
  status: number;
  body: string;
  bytes: number;
}
function request(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (chunks.length < 4) chunks.push(c);
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, 500), bytes }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Opens a response and resolves once its headers are in, leaving the body flowing until the caller destroys it. */
function openStream(port: number, path: string, headers: Record<string, string>): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'GET', path, headers, agent: false }, (res) => {
      res.resume();
      res.on('error', () => {});
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

const signer = probeSigner(KEY, 'node-b')!;
const proven = (method: string, path: string) => ({ [PROBE_PROOF_HEADER]: signer(method, path) });

t.test(
  'anonymous and forged requests get 401 TORUS_UNAUTHENTICATED on every probe route; /node_id stays open',
  async (t) => {
    const port = await probeServer(t, KEY);
    for (const [method, path] of [
      ['GET', '/v1/probe/echo'],
      ['GET', '/v1/probe/source?bytes=1000'],
      ['GET', '/v1/probe/stream?ms=100'],
      ['POST', '/v1/probe/sink'],
      ['GET', '/v1/identity'],
    ] as const) {
      const anon = await request(port, method, path);
      t.equal(anon.status, 401, `${method} ${path} anonymous → 401`);
      t.match(JSON.parse(anon.body), { error: { code: 'TORUS_UNAUTHENTICATED' } });
      const wrongKey = probeSigner('other'.repeat(13), 'node-b')!;
      t.equal(
        (await request(port, method, path, { [PROBE_PROOF_HEADER]: wrongKey(method, path) })).status,
        401,
        `${method} ${path} with another key → 401`,
      );
      t.equal(
        (await request(port, method, path, { [PROBE_PROOF_HEADER]: signer(method, '/v1/probe/other') })).status,
        401,
        'a proof for another path → 401',
      );
    }
    t.equal((await request(port, 'GET', '/node_id')).status, 200, '/node_id needs no proof');
    t.equal(
      (await request(port, 'GET', '/v1/probe/echo', proven('GET', '/v1/probe/echo'))).status,
      200,
      'a proven echo → 200',
    );
  },
);

t.test('replayed and stale proofs are refused', async (t) => {
  const port = await probeServer(t, KEY);
  const headers = proven('GET', '/v1/probe/echo');
  t.equal((await request(port, 'GET', '/v1/probe/echo', headers)).status, 200);
  t.equal((await request(port, 'GET', '/v1/probe/echo', headers)).status, 401, 'the same proof again → 401');
  const old = probeSigner(KEY, 'node-b', () => Date.now() - 31_000)!;
  t.equal(
    (await request(port, 'GET', '/v1/probe/echo', { [PROBE_PROOF_HEADER]: old('GET', '/v1/probe/echo') })).status,
    401,
    '31 s old → 401',
  );
  const ahead = probeSigner(KEY, 'node-b', () => Date.now() + 31_000)!;
  t.equal(
    (await request(port, 'GET', '/v1/probe/echo', { [PROBE_PROOF_HEADER]: ahead('GET', '/v1/probe/echo') })).status,
    401,
    '31 s ahead → 401',
  );
  const checker = new ProofChecker(KEY);
  t.match(checker.check(`v1 node-b 1 0011223344556677 ${'a'.repeat(63)}`, 'GET', '/'), { ok: false }, 'malformed');
});

t.test('sizes capped; force works only for a proven caller', async (t) => {
  const port = await probeServer(t, KEY);
  const big = Buffer.alloc(MAX_ECHO_BODY_BYTES + 1);
  t.equal(
    (await request(port, 'POST', '/v1/probe/echo', proven('POST', '/v1/probe/echo'), big)).status,
    413,
    'oversized echo body → 413',
  );
  const path = `/v1/probe/source?bytes=${1 << 30}&ms=5000`;
  const src = await request(port, 'GET', path, proven('GET', path));
  t.equal(src.status, 200);
  t.ok(src.bytes <= MAX_SOURCE_BYTES, `1 GiB asked, ${src.bytes} bytes sent (cap ${MAX_SOURCE_BYTES})`);
  // Hold the gate with a proven stream whose headers have arrived (the gate is taken before they are sent), then try
  // to force past it with and without a proof. No sleep: a loaded machine cannot let the hold lapse early.
  const hp = '/v1/probe/stream?ms=20000&session=s1';
  const hold = await openStream(port, hp, proven('GET', hp));
  t.equal(hold.statusCode, 200, 'the holder streams');
  const anonForce = await request(port, 'GET', '/v1/probe/stream?ms=200', { [PROBE_FORCE_HEADER]: '1' });
  t.equal(anonForce.status, 401, 'force without a proof → 401, not a stream');
  const sp = '/v1/probe/stream?ms=200&session=s2';
  t.equal(
    (await request(port, 'GET', sp, proven('GET', sp))).status,
    503,
    'a proven caller without force waits its turn (503 busy)',
  );
  const fp = '/v1/probe/stream?ms=200&session=s3';
  t.equal(
    (await request(port, 'GET', fp, { ...proven('GET', fp), [PROBE_FORCE_HEADER]: '1' })).status,
    200,
    'a proven caller may force',
  );
  hold.destroy();
});

t.test("the profiler's clients prove the key; open mode asks no proof", async (t) => {
  const port = await probeServer(t, KEY);
  t.ok((await measureRtt('127.0.0.1', port, { samples: 3, signer })).rttMs > 0, 'measureRtt');
  t.ok(
    (await measureCapacity('127.0.0.1', port, { durationMs: 100, repeats: 1, signer })).bps > 0,
    'measureCapacity (stream)',
  );
  t.ok(
    (await measureThroughput('127.0.0.1', port, { durationMs: 100, maxBytes: 1 << 20, signer })).bytes > 0,
    'measureThroughput (sink)',
  );
  await t.rejects(measureRtt('127.0.0.1', port, { samples: 1 }), /HTTP 401/, 'without the signer: refused');
  const open = await probeServer(t, null);
  t.ok((await measureRtt('127.0.0.1', open, { samples: 2 })).rttMs > 0, 'open mode: no proof needed');
});
