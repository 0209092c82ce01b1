/**
 * End to end, real processes and a real browser: the dashboard served by one node of a 3-node lab cluster shows
 * every node and every link (one per address, typed and measured), and follows the cluster live when a node is
 * killed (kill -9: it and its links disappear after the failure timeout, a NodeGone event is listed).
 *
 * Where the browser runs: in the root namespace, on the helper's bridge (test/e2e/lab-cluster.ts). The root
 * namespace cannot reach 10.77.x addresses, so the page is opened at http://127.0.0.1:<bridge port>/, whose
 * bytes are piped over a Unix socket into the node's namespace and to its API on 127.0.0.1. Running chromium
 * itself inside the namespace (`ip netns exec` as a wrapper executable) would also work, but the bridge keeps
 * the browser an ordinary playwright launch, and the node needs no extra listen address. The node still serves
 * the page, the scripts and the event stream itself; the Host and Origin the browser sends are equal, so the
 * API's same-origin rule is exercised as in real use.
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { chromiumSkipReason, openBrowserPage } from '../fixtures/browser.js';
import { E2eCluster, e2eUnavailableReason, type NodeView } from './lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const FAILURE_TIMEOUT_MS = 3000;
const why = Lab.unavailableReason() ?? e2eUnavailableReason() ?? (await chromiumSkipReason());

t.test(
  'dashboard of a live lab cluster: every node and link, live update when a node is killed',
  { timeout: 170_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(
      t,
      { hosts: 3, lanRate: '1gbit', links: [{ a: 0, b: 1, rate: '5gbit', label: 'thunderbolt' }] },
      async (lab) => {
        const t0 = Date.now();
        const c = await E2eCluster.start(t, lab, {
          failureTimeoutMs: FAILURE_TIMEOUT_MS,
          nodeArgs: (h) => [
            '--allow-exec',
            '--iface-type',
            'lan0=ethernet',
            ...(h <= 1 ? ['--iface-type', `${lab.ifName(h, h === 0 ? 1 : 0)}=thunderbolt`] : []),
          ],
        });
        const measured = (vs: NodeView[]) =>
          vs.every(
            (v) => v.topology.links.length === 8 && v.topology.links.every((l) => typeof l.bandwidthBps === 'number'),
          );
        const vs = await c.converged(90_000, measured);
        const readyMs = Date.now() - t0;
        const ids = c.nodes.map((n) => n.id);
        t.comment(
          `start line printed after: ${c.nodes.map((n) => `h${n.host} ${n.printedAt ? n.printedAt - n.spawnedAt : 'not yet'} ms`).join(', ')} (cluster agreed ${readyMs} ms)`,
        );
        const linkKey = (l: { source: string; sink: string; ip?: string | undefined }) =>
          `${l.source}>${l.sink}@${l.ip ?? ''}`;
        const expectedLinks = vs[0]!.topology.links.map(linkKey).sort();
        const leaderId = vs[0]!.node.leaderId!;

        const { page, errors } = await openBrowserPage(t);

        const served = c.nodes[0]!;
        const openedAt = Date.now();
        // Opened as the node prints it at start: its URL with the API token; the page then lives on a session cookie.
        await page.goto(`${served.api}/?token=${served.token}`);
        t.equal(page.url(), `${served.api}/`, 'signed in: redirected to / without the token');
        await page.waitForSelector('[data-testid="live"].on', { timeout: 20_000 });
        const nodes = async () =>
          (
            await page
              .locator('[data-testid="node"]')
              .evaluateAll((els) => els.map((e) => e.getAttribute('data-node-id')))
          ).sort();
        const links = async () =>
          (
            await page.locator('[data-testid="link"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-link')))
          ).sort();
        await page.waitForFunction(
          (n) => document.querySelectorAll('[data-testid="link"]').length === n,
          expectedLinks.length,
          { timeout: 10_000 },
        );
        const liveMs = Date.now() - openedAt;
        t.same(await nodes(), [...ids].sort(), 'every node drawn');
        t.same(await links(), expectedLinks, 'every link drawn, one per address (8)');

        // Node boxes: name, role, memory. Link labels: type and measured bandwidth.
        for (const [h, id] of ids.entries()) {
          const text = await page.locator(`[data-node-id="${id}"]`).textContent();
          t.match(
            text,
            new RegExp(`h${h}.*${id === leaderId ? 'leader' : 'follower'}.*GiB`),
            `h${h}: name, role, memory`,
          );
        }
        const tb = `${ids[0]}>${ids[1]}@${lab.linkIp(0, 1)}`;
        t.match(
          await page.locator(`[data-link="${tb}"]`).textContent(),
          /thunderbolt [\d.]+ [MG]bit\/s/,
          'the p2p link is labelled thunderbolt with its measured speed',
        );
        t.match(
          await page.locator(`[data-link="${ids[0]}>${ids[2]}@${lab.hosts[2]!.lanIp}"]`).textContent(),
          /ethernet [\d.]+ [MG]bit\/s/,
          'a LAN link is labelled ethernet with its measured speed',
        );
        t.match(
          await page.locator(`[data-link="${tb}"] path`).getAttribute('class'),
          /^link bw-/,
          'links are coloured by bandwidth class',
        );

        // kill -9 a node, the leader when it is not the one serving the page (else h2): it and its links disappear
        // without a reload, and the roles follow the new leader.
        const leaderHost = ids.indexOf(leaderId);
        const victim = c.nodes[leaderHost !== 0 ? leaderHost : 2]!;
        victim.kill('SIGKILL');
        const killedAt = Date.now();
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="node"]').length === 2, undefined, {
          timeout: FAILURE_TIMEOUT_MS + 15_000,
        });
        const goneMs = Date.now() - killedAt;
        t.ok(
          goneMs <= FAILURE_TIMEOUT_MS + 5000,
          `the killed node left the page ${goneMs} ms after kill -9 (failure timeout ${FAILURE_TIMEOUT_MS} ms)`,
        );
        t.same(await nodes(), ids.filter((id) => id !== victim.id).sort(), 'the two live nodes remain');
        await page.waitForFunction(
          (n) => document.querySelectorAll('[data-testid="link"]').length === n,
          expectedLinks.filter((l) => !l.includes(victim.id)).length,
          { timeout: 5000 },
        );
        t.same(
          await links(),
          expectedLinks.filter((l) => !l.includes(victim.id)),
          `its links removed (${expectedLinks.filter((l) => !l.includes(victim.id)).length} remain)`,
        );
        await page.waitForFunction(
          (id) =>
            Array.from(document.querySelectorAll('[data-testid="events"] li')).some(
              (li) => /NodeGone/.test(li.textContent ?? '') && (li.textContent ?? '').includes(id),
            ),
          victim.id,
          { timeout: 5000 },
        );
        t.pass('a NodeGone event for it is listed');
        const after = await c.converged(15_000);
        const newLeader = after[0]!.node.leaderId!;
        await page
          .waitForFunction(
            (id) => {
              const leaders = Array.from(document.querySelectorAll('[data-testid="node"].leader'));
              return leaders.length === 1 && leaders[0]!.getAttribute('data-node-id') === id;
            },
            newLeader,
            { timeout: 10_000 },
          )
          .then(
            () =>
              t.pass(
                `the page shows one leader, ${newLeader === leaderId ? 'still' : 'now'} h${ids.indexOf(newLeader)}`,
              ),
            (e: Error) => t.fail(`leader role on the page: ${e.message}`),
          );

        // The node serving the page restarts (kill -9, same data dir): the page reconnects by itself and shows the
        // whole cluster again, the restarted node with its next incarnation.
        c.startNode(victim.host); // bring the cluster back to three first
        await c.converged(60_000, (v) => v.length === 3);
        served.kill('SIGKILL');
        await page.waitForSelector('[data-testid="live"].off', { timeout: 10_000 });
        const downAt = Date.now();
        await new Promise((r) => setTimeout(r, 1000));
        c.startNode(served.host);
        const back = await page
          .waitForFunction(
            (n) =>
              document.querySelector('[data-testid="live"].on') !== null &&
              document.querySelectorAll('[data-testid="node"]').length === n,
            3,
            { timeout: 60_000 },
          )
          .then(
            () => true,
            (e: Error) => {
              t.fail(`the page did not come back live with 3 nodes: ${e.message}`);
              return false;
            },
          );
        if (back) {
          const reloadMs = Date.now() - downAt;
          t.pass(
            `after the serving node restarted, the page reconnected and shows 3 nodes ${reloadMs} ms after it went down`,
          );
          t.same(await nodes(), [...ids].sort(), 'the same three node ids');
          // and it is live, not a stale picture: an instance placed now appears without a reload
          await c.converged(60_000);
          const res = await served.fetch(`/v1/instances`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              workload: { id: 'w', memoryBytes: 1 << 20, layers: 2, kind: 'exec', command: 'sleep', args: ['60'] },
              instanceId: 'after-restart',
            }),
          });
          t.equal(res.status, 201, 'an instance placed after the restart');
          await page.waitForSelector('[data-instance-id="after-restart"]', { timeout: 10_000 }).then(
            () => t.pass('appears on the page live'),
            (e: Error) => t.fail(`instance not shown: ${e.message}`),
          );
          t.comment(`timings: page back ${reloadMs} ms after the serving node was killed (restarted 1 s later)`);
        }
        t.same(
          errors.filter((e) => !/ERR_CONNECTION|Failed to load resource|net::/.test(e)),
          [],
          'no script errors (connection errors while the node was down aside)',
        );
        t.comment(
          `timings: cluster ready ${readyMs} ms, page live with all links ${liveMs} ms after opening, node gone from the page ${goneMs} ms after kill -9`,
        );
      },
    );
  },
);
