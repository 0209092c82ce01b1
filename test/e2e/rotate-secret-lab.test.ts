/**
 * Rotating the cluster secret, as docs/security.md describes it: stop every node, start each with the new secret
 * (TORUS_SECRET). On a real 3-host lab cluster: the replicated state survives (an instance placed before is still
 * there, the log index goes on), the API certificate is kept (pinned clients keep working), and everything tied
 * to the old secret stops working at once: the old API token, an old dashboard session cookie, and a peer proof
 * under the old peer key.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Lab, profiled, withLab } from '../../src/lab/index.js';
import { deriveClusterKeys } from '../../src/node/credentials.js';
import { peerSigner } from '../../src/protocols/peer-http-proof.js';
import { TLS_CERT_FILE } from '../../src/api/tls/node-cert.js';
import { E2eCluster, e2eUnavailableReason, type E2eNode } from './lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

t.setTimeout(360_000);
const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const newSecret = (): string => `torus-${randomBytes(32).toString('base64url')}`;

t.test(
  'secret rotation: state kept, old token, cookie and peer proofs refused',
  { timeout: 340_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3 }, async (lab) => {
      let secret = newSecret();
      const oldSecret = secret;
      const c = await E2eCluster.start(t, lab, {
        secretOf: () => secret,
        nodeArgs: () => ['--iface-type', 'lan0=ethernet'],
      });
      // Profiled too: a placement needs every node's memory figure in the state.
      await c.converged(150_000, profiled);
      const [h0, h1] = c.nodes as [E2eNode, E2eNode];
      const placed = await h0.fetch('/v1/instances', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          instanceId: 'kept',
          minNodes: 1,
          workload: { id: 'w', kind: 'ring', memoryBytes: 1 << 20, layers: 1 },
        }),
      });
      t.ok(
        [200, 201].includes(placed.status),
        `placed an instance before the rotation (${placed.status} ${(await placed.text()).slice(0, 300)})`,
      );
      await c.until(
        'every node has the instance',
        async () => (await Promise.all(c.nodes.map((n) => n.tryGet('/v1/instances/kept')))).every(Boolean),
        60_000,
      );
      const before = (await h0.get<{ lastIndex: number }>('/v1/state')).lastIndex;
      const oldToken = h0.token;
      const signIn = await fetch(`${h0.api}/?token=${oldToken}`, { redirect: 'manual' });
      const oldCookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
      t.match(oldCookie, /^torus_session=/, 'a dashboard session under the old token');
      t.equal(
        (await fetch(`${h0.api}/v1/node`, { headers: { cookie: oldCookie } })).status,
        200,
        'the session works before',
      );
      const certs = c.nodes.map((n) => readFileSync(join(n.dataDir, TLS_CERT_FILE), 'utf8'));

      // The procedure: every node stopped, each started with the new secret.
      secret = newSecret();
      await Promise.all(c.nodes.map((n) => n.stop('SIGTERM', 5000)));
      for (const n of c.nodes) c.startNode(n.host);
      await c.converged(150_000);

      t.not(h0.token, oldToken, 'the API token was re-derived');
      t.ok(await h0.tryGet('/v1/instances/kept'), 'the instance placed before is still in the state');
      t.ok((await h0.get<{ lastIndex: number }>('/v1/state')).lastIndex >= before, 'the log goes on from where it was');
      t.same(
        c.nodes.map((n) => readFileSync(join(n.dataDir, TLS_CERT_FILE), 'utf8')),
        certs,
        'the certificates are kept (pins stay valid)',
      );

      t.equal(
        (await fetch(`${h0.api}/v1/node`, { headers: { authorization: `Bearer ${oldToken}` } })).status,
        401,
        'the old token: 401',
      );
      t.equal(
        (await fetch(`${h0.api}/v1/node`, { headers: { cookie: oldCookie } })).status,
        401,
        'the old session cookie: 401',
      );
      const path = '/v1/instances/kept/logs?rank=0';
      const oldProof = peerSigner(deriveClusterKeys(oldSecret, 'e2e').peerHttpKey, h1.id)('GET', path);
      t.equal((await fetch(h0.api + path, { headers: oldProof })).status, 401, 'a peer proof under the old key: 401');
      const newProof = peerSigner(deriveClusterKeys(secret, 'e2e').peerHttpKey, h1.id)('GET', path);
      const proven = await fetch(h0.api + path, { headers: newProof, signal: AbortSignal.timeout(20_000) });
      t.not(proven.status, 401, `a peer proof under the new key is accepted (${proven.status})`);
      await proven.body?.cancel();
    });
  },
);
