/**
 * What an attacker on the LAN sees. tcpdump on every lab host's LAN interface while a user runs a 3-node
 * `node dist/main.js run`, uses the CLI and the dashboard (Chromium) from another lab host, and broadcasts an
 * artifact: neither the API token, nor the session cookie, nor the cluster secret appears in any capture, and
 * no node-to-node request carries `Authorization: Bearer` (the nodes' own requests, plain HTTP with a peer proof,
 * are in the capture for all to read). Then, with the capture stopped: the token sent over plain HTTP from
 * another host is refused with the https URL, and nothing is done.
 */
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Lab, withLab } from '../../src/lab/index.js';
import { chromiumSkipReason, openBrowserPage } from '../fixtures/browser.js';
import { Capture, captureSkipReason } from './fixtures/capture.js';
import { API_PORT, E2eCluster, e2eUnavailableReason, type E2eNode } from './lab-cluster.js';
import { readSecretIn } from '../../src/protocols/data-dir-files.js';
import { SESSION_COOKIE } from '../../src/api/auth.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { skipOrFail, partRuns } from '../fixtures/skip-or-fail.js';

t.setTimeout(400_000);
const CURL = '/usr/bin/curl';
const why = Lab.unavailableReason() ?? e2eUnavailableReason() ?? captureSkipReason();
const noBrowser = await chromiumSkipReason();
const MiB = 2 ** 20;

interface Held {
  holders: { node: string; complete: boolean }[];
}

t.test(
  'a LAN capture during run, remote CLI, remote dashboard and an artifact broadcast holds no credential',
  { timeout: 380_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet'] });
      // Links measured first: the run needs them, and the probes' bulk bytes (no credential) stay out of the capture.
      await c.converged(150_000, profiled);
      const [h0, h1, h2] = c.nodes as [E2eNode, E2eNode, E2eNode];
      const token = h0.token;
      const secret = readSecretIn(h0.dataDir)!;
      t.ok(secret, 'the cluster secret');
      const h0Https = `https://${lab.hosts[0]!.lanIp}:${API_PORT}`;
      const captures = await Promise.all(
        [0, 1, 2].map((h) => Capture.start(lab, h, join(c.tmpDir, `lan-h${h}.pcap`), t)),
      );

      // 1. A 3-node run from h0: h0 follows the ranks on h1 and h2 through their APIs.
      const run = await c.cli(
        0,
        ['run', '--min-nodes', '3', '--', '/bin/sh', '-c', 'echo "hello from rank $RANK"'],
        120_000,
      );
      t.equal(run.code, 0, `run: ${run.stderr.slice(-400)}`);
      for (const rank of [0, 1, 2]) t.match(run.stdout, `hello from rank ${rank}`, `rank ${rank}'s output arrived`);

      // 2. The CLI on h1 against h0's API over the LAN: https, the certificate pinned on first use.
      const status = await c.cli(1, ['status', '--api', h0Https], 60_000);
      t.equal(status.code, 0, `remote status over TLS: ${status.stderr}`);
      t.match(status.stdout, h0.id);
      const instances = await c.cli(1, ['instances', '--api', h0Https, '--json'], 60_000);
      t.equal(instances.code, 0, `remote instances over TLS: ${instances.stderr}`);

      // 3. An artifact broadcast from h0 to h1 and h2 (the data plane: plain, proven, no credential).
      const src = join(c.tmpDir, 'weights');
      mkdirSync(src);
      writeFileSync(join(src, 'w.bin'), randomBytes(3 * MiB));
      const add = await c.cli(
        0,
        ['artifacts', 'add', src, '--name', 'w', '--chunk-size', '1MiB', '--data-dir', h0.dataDir],
        60_000,
      );
      t.equal(add.code, 0, `add: ${add.stderr}`);
      const id = add.stdout.trim();
      await c.until(
        'every node knows the artifact',
        async () =>
          (await Promise.all(c.nodes.map((n) => n.tryGet<Held>(`/v1/artifacts/${id}`)))).every((a) => a !== null),
        60_000,
      );
      const broadcast = await c.cli(0, ['artifacts', 'broadcast', id, '--to', `${h1.id},${h2.id}`], 60_000);
      t.equal(broadcast.code, 0, `broadcast: ${broadcast.stderr}`);
      await c.until(
        'h1 and h2 hold it',
        async () => {
          const held = await h0.tryGet<Held>(`/v1/artifacts/${id}`);
          return [h1.id, h2.id].every((n) => held?.holders.some((h) => h.node === n && h.complete));
        },
        120_000,
        300,
      );

      // 4. The dashboard from h1, opened at the https URL the node prints for other machines.
      let cookie: string | undefined;
      if (partRuns(t, 'the dashboard over TLS from another host', noBrowser)) {
        const { page, context } = await openBrowserPage(t, { netns: lab.hosts[1]!.ns, ignoreHTTPSErrors: true });
        await page.goto(`${h0Https}/?token=${token}`);
        t.equal(page.url(), `${h0Https}/`, 'signed in over TLS from another host');
        await page.waitForSelector('[data-testid="live"].on', { timeout: 30_000 });
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="node"]').length === 3, undefined, {
          timeout: 20_000,
        });
        const session = (await context.cookies()).find((k) => k.name === SESSION_COOKIE);
        t.ok(session?.secure, 'the session cookie is Secure');
        cookie = session?.value;
        t.ok(cookie, 'a session cookie');
      }

      const sizes = await Promise.all(captures.map((k) => k.stop()));
      t.ok(
        sizes.every((n) => n > 10_000),
        `every capture has traffic (${sizes.map((n, h) => `h${h} ${n} B`).join(', ')})`,
      );
      const bearer = [
        'authorization: Bearer',
        'Authorization: Bearer',
        'authorization: bearer',
        'AUTHORIZATION: BEARER',
      ];
      const needles = [
        'x-torus-peer-proof',
        Buffer.from([0x16, 0x03, 0x01]),
        token,
        secret,
        cookie ?? token,
        ...bearer,
      ];
      const hits = await Promise.all(captures.map((k) => k.contains(needles)));
      const anywhere = (i: number): boolean => hits.some((h) => h[i]);
      t.ok(anywhere(0), "the nodes' own requests are in it, in clear, with their peer proof");
      t.ok(anywhere(1), 'TLS handshakes are in it (the remote CLI and browser)');
      t.notOk(anywhere(2), 'the API token is nowhere in the capture');
      t.notOk(anywhere(3), 'the cluster secret is nowhere in the capture');
      t.notOk(anywhere(4), 'the session cookie is nowhere in the capture', {
        skip: cookie ? false : 'no session cookie: the dashboard part did not run',
      });
      t.notOk(
        bearer.some((_, i) => anywhere(5 + i)),
        'no request in clear carries Authorization: Bearer',
      );

      // 5. The token over plain HTTP from another host: refused with the https URL, nothing placed.
      const body = JSON.stringify({
        instanceId: 'sniffed',
        workload: { id: 'x', kind: 'exec', memoryBytes: 1 << 20, layers: 1, command: '/bin/sh', args: ['-c', 'true'] },
      });
      const plain = await lab.exec(1, [
        CURL,
        '-s',
        '-w',
        '\n%{http_code}',
        '-X',
        'POST',
        '-H',
        `Authorization: Bearer ${token}`,
        '-H',
        'content-type: application/json',
        '--data',
        body,
        `http://${lab.hosts[0]!.lanIp}:${API_PORT}/v1/instances`,
      ]);
      const [answer, code] = [
        plain.stdout.slice(0, plain.stdout.lastIndexOf('\n')),
        plain.stdout.slice(plain.stdout.lastIndexOf('\n') + 1),
      ];
      t.equal(code, '403', 'refused');
      t.match(answer, /TORUS_TLS_REQUIRED/);
      t.match(answer, `${h0Https}/v1/instances`, 'the answer names the https URL');
      const after = await h0.get<{ instances: { id: string }[] } | { id: string }[]>('/v1/instances');
      const list = Array.isArray(after) ? after : after.instances;
      t.notOk(
        list.some((i) => i.id === 'sniffed'),
        'nothing was placed',
      );
      const node = await lab.exec(1, [
        CURL,
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        `http://${lab.hosts[0]!.lanIp}:${API_PORT}/node_id`,
      ]);
      t.equal(node.stdout, '200', 'GET /node_id (no credential) still answers plain HTTP from another host');
      const page = await lab.exec(1, [
        CURL,
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code} %{redirect_url}',
        `http://${lab.hosts[0]!.lanIp}:${API_PORT}/`,
      ]);
      t.equal(page.stdout, `308 ${h0Https}/`, 'a browser typing the http URL (no credential) is sent to the https one');
      const signIn = await lab.exec(1, [
        CURL,
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        `http://${lab.hosts[0]!.lanIp}:${API_PORT}/?token=${token}`,
      ]);
      t.equal(
        signIn.stdout,
        '403',
        'the sign-in URL with the token over plain HTTP from another host: refused, no session',
      );
    });
  },
);
