import t from 'tap';
import { chromiumSkipReason, openBrowserPage } from '../fixtures/browser.js';
import { AUTH, startApi, TEST_TOKEN } from './fixtures/harness.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const noBrowser = await chromiumSkipReason();

if (noBrowser) {
  t.test('dashboard in a real browser', { skip: skipOrFail(noBrowser) }, async () => {});
} else {
  t.test('the dashboard shows every node and link and follows the events stream', async (t) => {
    const { api, node } = await startApi(t, { ids: ['node-a', 'node-b', 'node-c'] });
    const { page, errors } = await openBrowserPage(t);
    // Without a session the page is the sign-in form; a wrong token is refused; the right one (pasted, as a user
    // would) starts a session (an HttpOnly cookie the page's script cannot read) and shows the dashboard.
    await page.goto(`${api.url}/`);
    await page.fill('#token', 'tt_wrong');
    await Promise.all([page.waitForURL(`${api.url}/login`), page.click('button[type=submit]')]);
    t.match(
      await page.locator('[data-testid="login-error"]').textContent(),
      /not this cluster/,
      'a wrong token: the form again',
    );
    errors.length = 0; // the browser logs the 401 of the refused sign-in as a console error; that one was intended
    await page.fill('#token', TEST_TOKEN);
    await Promise.all([page.waitForURL(`${api.url}/`), page.click('button[type=submit]')]);
    t.equal(await page.evaluate(() => document.cookie), '', 'the session cookie is HttpOnly');

    await page.waitForSelector('[data-testid="live"].on', { timeout: 10_000 });
    const nodes = async () =>
      (
        await page.locator('[data-testid="node"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-node-id')))
      ).sort();
    const links = async () =>
      (
        await page.locator('[data-testid="link"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-link')))
      ).sort();
    t.same(await nodes(), ['node-a', 'node-b', 'node-c'], 'every node drawn');
    const expected = node.cluster.links.map((l) => `${l.source}>${l.sink}@${l.ip}`).sort();
    t.equal(expected.length, 12);
    t.same(await links(), expected, 'every link drawn, one per address');
    t.match(await page.locator('[data-node-id="node-a"]').textContent(), /host-node-a.*leader.*GiB/);
    t.match(await page.locator('[data-link="node-a>node-b@10.77.1.2"]').textContent(), /thunderbolt 20 Gbit\/s/);
    t.equal(await page.locator('[data-link="node-a>node-b@10.77.1.2"] path').getAttribute('class'), 'link bw-fast');
    t.equal(await page.locator('[data-link="node-a>node-b@10.77.0.2"] path').getAttribute('class'), 'link bw-good');

    // An instance appears live, with its ring order and runner states.
    await fetch(`${api.url}/v1/instances`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ workload: { id: 'w', memoryBytes: 1024, layers: 3 }, instanceId: 'inst-live' }),
    });
    await page.waitForSelector('[data-instance-id="inst-live"]', { timeout: 5000 });
    t.match(await page.locator('[data-instance-id="inst-live"]').textContent(), /node-a → node-b → node-c.*Ready/);

    // An instance whose workload lists an artifact: its card shows, per placed node, held or the share received and
    // the rate (the holdings in the state), and follows them live.
    const art = 'ab'.repeat(32);
    const held = (nodeId: string, have: number, rateBps?: number) =>
      node.apply({
        type: 'ArtifactHeld',
        nodeId,
        artifactId: art,
        name: 'weights',
        bytes: 8 << 20,
        chunks: 8,
        have,
        ...(rateBps ? { rateBps } : {}),
      });
    held('node-a', 8);
    held('node-b', 3, 12 << 20);
    await fetch(`${api.url}/v1/instances`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({
        workload: { id: 'w-art', memoryBytes: 1024, layers: 3, artifacts: [art] },
        instanceId: 'inst-art',
      }),
    });
    const progress = (nodeId: string) =>
      page.locator(
        `[data-instance-id="inst-art"] [data-testid="artifact"][data-artifact-id="${art}"] [data-testid="artifact-node"][data-node-id="${nodeId}"]`,
      );
    await progress('node-b').waitFor({ timeout: 5000 });
    t.match(
      await page.locator('[data-instance-id="inst-art"] [data-testid="artifact"]').textContent(),
      /^weights \(abababababab, 8 MiB\)/,
      'the artifact: name, short id, size',
    );
    t.match(await progress('node-a').textContent(), /^host-node-a\s+held$/, 'a node that holds it: held');
    t.match(
      await progress('node-b').textContent(),
      /^host-node-b\s+37\.5% at 12 MiB\/s$/,
      'a node receiving it: share and rate',
    );
    t.equal(await progress('node-b').locator('progress').getAttribute('value'), '375', 'and a bar');
    t.match(await progress('node-c').textContent(), /^host-node-c\s+0\.0%$/, 'a node without it: 0%');
    // Beside it, the bound for what the placed nodes still lack (the instance view's, with the limiting node's name).
    const view = (await (await fetch(`${api.url}/v1/instances/inst-art`, { headers: AUTH })).json()) as {
      artifacts: { bound?: { seconds: number; node: string; side: string } }[];
    };
    const b = view.artifacts[0]!.bound!;
    t.ok(b && b.seconds > 0, `the instance view has a bound: ${JSON.stringify(b)}`);
    t.equal(
      await page.locator('[data-instance-id="inst-art"] [data-testid="artifact-bound"]').textContent(),
      `bound ${b.seconds < 1 ? `${Math.round(b.seconds * 1000)} ms` : `${b.seconds.toFixed(1)} s`} (${b.side}: host-${b.node})`,
      'and the dashboard shows it, naming the node that sets it',
    );
    held('node-b', 8);
    await page.waitForFunction(
      () =>
        document
          .querySelector('[data-instance-id="inst-art"] [data-node-id="node-b"][data-testid="artifact-node"]')
          ?.getAttribute('data-complete') === 'true',
      undefined,
      { timeout: 5000 },
    );
    t.match(await progress('node-b').textContent(), /held$/, 'live: node-b completes');

    // A node goes away: it and its links disappear without a reload; the event is listed.
    node.apply({ type: 'NodeGone', nodeId: 'node-c', reason: 'heartbeat timeout' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="node"]').length === 2, undefined, {
      timeout: 5000,
    });
    t.same(await nodes(), ['node-a', 'node-b']);
    t.same(
      await links(),
      expected.filter((l) => !l.includes('node-c')),
      'links of the gone node removed',
    );
    t.match(await page.locator('[data-testid="events"] li').first().textContent(), /NodeGone.*node-c/);
    t.match(await page.locator('[data-instance-id="inst-live"]').textContent(), /needs-replacement|node-c/);
    t.same(errors, [], 'no script errors');
  });
}
