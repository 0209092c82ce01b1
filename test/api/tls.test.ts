/**
 * The API over TLS, on loopback: the node's own certificate (made with node:crypto, saved 0600, the same after a
 * restart), TLS and plain HTTP on one port, the session cookie `Secure` over TLS only, the CLI pinning the
 * certificate on first use and refusing a changed one before anything is sent, and peer proofs (never the
 * token) on the routes another node calls. Plain HTTP from another machine is the lab's part (test/e2e/sniff-lab).
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { loadNodeCert, TLS_CERT_FILE, TLS_KEY_FILE } from '../../src/api/tls/node-cert.js';
import { makeSelfSignedCert, certFingerprint } from '../../src/api/tls/self-signed.js';
import { ApiClient } from '../../src/cli/api-client.js';
import { KNOWN_HOSTS_FILE } from '../../src/cli/pinned-tls.js';
import { TorusError } from '../../src/protocols/errors.js';
import { peerSigner, PEER_PROOF_HEADER, PeerProofChecker, bodyDigest } from '../../src/protocols/peer-http-proof.js';
import { raw, startApi, TEST_TOKEN } from './fixtures/harness.js';

const PEER_KEY = 'ab'.repeat(32);

function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'torus-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Records every request that reached the server's handler (after TLS, before routing). */
function requestSpy(): {
  handler: (req: IncomingMessage, res: ServerResponse) => boolean;
  seen: { url: string; authorization: string | undefined }[];
} {
  const seen: { url: string; authorization: string | undefined }[] = [];
  return {
    seen,
    handler: (req) => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      return false;
    },
  };
}

function httpsGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingMessage['headers']; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { headers, rejectUnauthorized: false }, (res) => {
      const fingerprint = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, fingerprint }));
    });
    req.once('error', reject);
    req.end();
  });
}

t.test(
  'the node certificate: made on first start, 0600, the same after a restart; a given pair is checked',
  async (t) => {
    const dir = tempDir(t);
    const first = loadNodeCert({ dataDir: dir, nodeId: 'node-a' });
    t.equal(first.source, 'created');
    t.match(first.fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    for (const f of [TLS_CERT_FILE, TLS_KEY_FILE]) t.equal(statSync(join(dir, f)).mode & 0o777, 0o600, `${f} is 0600`);
    const again = loadNodeCert({ dataDir: dir, nodeId: 'node-a' });
    t.equal(again.source, 'data-dir');
    t.equal(again.fingerprint, first.fingerprint, 'a restart keeps the certificate (clients pinned it)');
    t.equal(certFingerprint(readFileSync(join(dir, TLS_CERT_FILE), 'utf8')), first.fingerprint);

    const org = makeSelfSignedCert('org', ['torus.example']);
    const other = makeSelfSignedCert('other', ['x']);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'org.crt'), org.cert);
    writeFileSync(join(dir, 'org.key'), org.key);
    writeFileSync(join(dir, 'other.key'), other.key);
    const given = loadNodeCert({
      dataDir: dir,
      nodeId: 'node-a',
      certFile: join(dir, 'org.crt'),
      keyFile: join(dir, 'org.key'),
    });
    t.equal(given.source, 'given');
    t.equal(given.fingerprint, certFingerprint(org.cert));
    t.throws(
      () =>
        loadNodeCert({
          dataDir: dir,
          nodeId: 'node-a',
          certFile: join(dir, 'org.crt'),
          keyFile: join(dir, 'other.key'),
        }),
      /the key is not the certificate's/,
    );
  },
);

t.test('TLS and plain HTTP on one port; the session cookie is Secure over TLS only', async (t) => {
  const cert = loadNodeCert({ dataDir: tempDir(t), nodeId: 'node-a' });
  const { api } = await startApi(t, { tls: cert });
  t.equal(api.fingerprint, cert.fingerprint);
  t.equal(api.secureUrl, api.url.replace('http:', 'https:'));
  const overTls = await httpsGet(`${api.secureUrl}/?token=${TEST_TOKEN}`);
  t.equal(overTls.status, 303, 'signed in over TLS');
  t.equal(overTls.fingerprint, cert.fingerprint, 'the node serves its own certificate');
  t.match(String(overTls.headers['set-cookie']), /; Secure/, 'the cookie is Secure over TLS');
  const plain = await raw(api.url, 'GET', `/?token=${TEST_TOKEN}`, undefined, { authorization: '' });
  t.equal(plain.status, 303, 'plain HTTP from loopback still signs in (the local dashboard)');
  t.notMatch(
    String(plain.headers['set-cookie']),
    /Secure/,
    'no Secure flag over plain loopback HTTP (the browser would drop it)',
  );
  const node = await raw(api.url, 'GET', '/v1/node');
  t.equal(node.status, 200, 'the local CLI over plain loopback HTTP');
});

t.test('the CLI pins the certificate on first use and refuses a changed one, sending nothing', async (t) => {
  const cliDir = tempDir(t);
  const a = loadNodeCert({ dataDir: tempDir(t), nodeId: 'node-a' });
  const spyA = requestSpy();
  const first = await startApi(t, { tls: a, probeHandler: spyA.handler });
  const token = { token: TEST_TOKEN, lookedIn: ['--token'] };
  const env = {};
  const client = new ApiClient(first.api.secureUrl!, token, { dataDir: cliDir, env });
  const node = await client.get<{ id: string }>('/v1/node');
  t.equal(node.id, 'node-a', 'first use: answered over TLS');
  const known = readFileSync(join(cliDir, KNOWN_HOSTS_FILE), 'utf8');
  t.equal(known, `127.0.0.1:${first.api.port} ${a.fingerprint}\n`, 'the fingerprint is pinned for that address');
  t.equal(statSync(join(cliDir, KNOWN_HOSTS_FILE)).mode & 0o777, 0o600);
  t.equal(spyA.seen.at(-1)?.authorization, `Bearer ${TEST_TOKEN}`, 'the token went to the pinned node, over TLS');
  const port = first.api.port;
  await first.api.close();

  // The same address now answers with another certificate (a replaced node, or someone in the middle).
  const b = loadNodeCert({ dataDir: tempDir(t), nodeId: 'node-a' });
  const spyB = requestSpy();
  const second = await startApi(t, { tls: b, port, probeHandler: spyB.handler });
  const again = new ApiClient(second.api.secureUrl!, token, { dataDir: cliDir, env });
  const error = await again.get('/v1/node').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(error instanceof TorusError, 'refused');
  t.equal((error as TorusError).code, 'TORUS_TLS_FINGERPRINT_MISMATCH');
  t.match((error as TorusError).message, a.fingerprint, 'names the pinned fingerprint');
  t.match((error as TorusError).message, b.fingerprint, 'names the one presented');
  t.match((error as TorusError).message, /Nothing was sent/);
  t.same(spyB.seen, [], "no request (and so no token) reached the other certificate's server");

  const io = { out: '', err: '' };
  const { runStatusCommand } = await import('../../src/cli/status.js');
  const code = await runStatusCommand(['--api', second.api.secureUrl!, '--token', TEST_TOKEN, '--data-dir', cliDir], {
    stdout: {
      write: (s: string) => {
        io.out += s;
      },
    },
    stderr: {
      write: (s: string) => {
        io.err += s;
      },
    },
  });
  t.equal(code, 1, '`status` exits 1');
  t.match(io.err, a.fingerprint, 'the CLI message names the pinned fingerprint');
  t.match(io.err, b.fingerprint, 'and the presented one');
  t.same(spyB.seen, [], 'still nothing reached the server');

  const flagged = new ApiClient(second.api.secureUrl!, token, {
    dataDir: cliDir,
    env,
    fingerprint: b.fingerprint.toLowerCase(),
  });
  t.equal((await flagged.get<{ id: string }>('/v1/node')).id, 'node-a', '--fingerprint names the new one: accepted');
  const wrongEnv = new ApiClient(second.api.secureUrl!, token, {
    dataDir: tempDir(t),
    env: { TORUS_API_FINGERPRINT: a.fingerprint },
  });
  const envError = await wrongEnv.get('/v1/node').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.match(
    String((envError as Error).message),
    /TORUS_API_FINGERPRINT/,
    'TORUS_API_FINGERPRINT is checked and named as the source',
  );
});

t.test('the CLI never sends the token over plain HTTP to another host', async (t) => {
  const client = new ApiClient('http://10.77.200.1:52515', { token: TEST_TOKEN, lookedIn: ['--token'] });
  const error = await client.get('/v1/node').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.equal((error as TorusError).code, 'TORUS_TLS_REQUIRED', 'refused before any connection');
  t.match((error as TorusError).message, 'https://10.77.200.1:52515');
});

t.test('peer proofs: bound to method, path, body, sender, time; single use; a separate key', async (t) => {
  let now = 1_000_000;
  const sign = peerSigner(PEER_KEY, 'node-b', () => now);
  const checker = new PeerProofChecker(PEER_KEY, () => now);
  const h = sign('POST', '/v1/x?a=1', '{"a":1}')[PEER_PROOF_HEADER]!;
  t.match(h, new RegExp(`^v1 node-b ${now} [0-9a-f]{32} ${bodyDigest('{"a":1}')} [0-9a-f]{64}$`));
  t.match(checker.check(h, 'POST', '/v1/x?a=2', Buffer.from('{"a":1}')), { ok: false }, 'another query');
  t.match(checker.check(h, 'GET', '/v1/x?a=1', Buffer.from('{"a":1}')), { ok: false }, 'another method');
  t.match(checker.check(h, 'POST', '/v1/x?a=1', Buffer.from('{"a":2}')), { ok: false, why: /body/ }, 'another body');
  t.match(
    checker.check(h.replace('node-b', 'node-c'), 'POST', '/v1/x?a=1', Buffer.from('{"a":1}')),
    { ok: false },
    'another sender',
  );
  t.match(
    new PeerProofChecker('cd'.repeat(32), () => now).check(h, 'POST', '/v1/x?a=1', Buffer.from('{"a":1}')),
    { ok: false, why: /match/ },
    'another key',
  );
  t.same(
    checker.check(h, 'POST', '/v1/x?a=1', Buffer.from('{"a":1}')),
    { ok: true, nodeId: 'node-b' },
    'the request it names',
  );
  t.match(checker.check(h, 'POST', '/v1/x?a=1', Buffer.from('{"a":1}')), { ok: false, why: /replay/ }, 'once only');
  const old = sign('GET', '/v1/y')[PEER_PROOF_HEADER]!;
  now += 31_000;
  t.match(checker.check(old, 'GET', '/v1/y'), { ok: false, why: /window/ }, 'stale');
});

t.test('the API takes a peer proof on the routes nodes call each other on, never elsewhere, once', async (t) => {
  const { api } = await startApi(t, { auth: { mode: 'token', token: TEST_TOKEN, peerKey: PEER_KEY } });
  const sign = peerSigner(PEER_KEY, 'node-b');
  const path = '/v1/instances/none/logs?rank=0';
  const headers = sign('GET', path);
  const proven = await raw(api.url, 'GET', path, undefined, { authorization: '', ...headers });
  t.not(proven.status, 401, `a proven peer gets past authentication (${proven.status} ${proven.text.slice(0, 80)})`);
  const replay = await raw(api.url, 'GET', path, undefined, { authorization: '', ...headers });
  t.equal(replay.status, 401, 'the same proof again: refused');
  t.match(replay.text, /replay/);
  const elsewhere = await raw(api.url, 'GET', '/v1/node', undefined, { authorization: '', ...sign('GET', '/v1/node') });
  t.equal(elsewhere.status, 401, 'a peer proof opens no other route');
  const forged = await raw(api.url, 'GET', path, undefined, {
    authorization: '',
    ...peerSigner('ee'.repeat(32), 'node-b')('GET', path),
  });
  t.equal(forged.status, 401, 'a proof under another key: refused');
});
