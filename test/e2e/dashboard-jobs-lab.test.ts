/**
 * Jobs end to end, real processes and a real browser: the dashboard of a 3-node lab cluster (1 Gbit/s LAN,
 * nodes with --allow-exec) shows jobs — a completed one and a failed one with their states, exit codes, each rank's
 * status and exit, a log tail read through the logs route (the failing rank's stderr by default, another rank's
 * stdout on a click), and deletes one with its button — and draws a live ring benchmark as a chart: one line of
 * bus bandwidth per size for the run, and the ring's measured link capacity as a reference line; after a reload the
 * run is still drawn (GET /v1/bench/ring). The browser runs in the root namespace on the test's bridge
 * (test/e2e/lab-cluster.ts); the node serves the page, its scripts and the event stream itself.
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { chromiumSkipReason, openBrowserPage } from '../fixtures/browser.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { E2eCluster, e2eUnavailableReason, type NodeView } from './lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

// A multi-node lab on a shared 2-core machine (forming the cluster alone took 70 s at load 20): more than the
// default per-file timeout, so a slow CI machine does not cut a healthy run; each wait inside stays bounded.
t.setTimeout(360_000);

const why = Lab.unavailableReason() ?? e2eUnavailableReason() ?? (await chromiumSkipReason());

t.test(
  'dashboard: completed and failed jobs with exit codes, log tails, delete; the ring benchmark chart',
  { timeout: 340_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3, lanRate: '1gbit' }, async (lab) => {
      const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet'] });
      const t0 = Date.now();
      const phase = (what: string) => t.comment(`${what}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      const measured = (vs: NodeView[]) =>
        vs.every(
          (v) => v.topology.links.length === 6 && v.topology.links.every((l) => typeof l.bandwidthBps === 'number'),
        );
      await c.converged(100_000, profiled);
      phase('cluster formed');
      const n0 = c.nodes[0]!;
      const place = async (id: string, script: string) => {
        const res = await n0.fetch('/v1/instances', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            instanceId: id,
            minNodes: 3,
            workload: {
              id: `${id}-workload`,
              kind: 'exec',
              memoryBytes: 1 << 20,
              layers: 3,
              command: '/bin/sh',
              args: ['-c', script],
            },
          }),
        });
        t.equal(res.status, 201, `${id} placed`);
      };

      const { page, errors } = await openBrowserPage(t);
      await page.goto(`${n0.api}/?token=${n0.token}`);
      await page.waitForSelector('[data-testid="live"].on', { timeout: 20_000 });

      await place('ok-job', 'echo "hello from rank $RANK"');
      await place('bad-job', 'if [ "$RANK" = 1 ]; then echo "rank 1 gives up" >&2; exit 3; fi; exec sleep 317');
      const card = (id: string) => page.locator(`[data-testid="job"][data-instance-id="${id}"]`);
      const shows = (id: string, testid: string, pattern: RegExp, ms = 60_000) =>
        page.waitForFunction(
          ([id, testid, source]) => {
            const node = document.querySelector(`[data-instance-id="${id}"] [data-testid="${testid}"]`);
            return !!node && new RegExp(source!).test(node.textContent ?? '');
          },
          [id, testid, pattern.source],
          { timeout: ms },
        );

      await shows('ok-job', 'job-state', /^completed$/);
      t.equal(
        await card('ok-job').locator('[data-testid="exit-code"]').textContent(),
        'exit 0',
        'the completed job: exit 0',
      );
      t.match(
        await card('ok-job').locator('[data-testid="workload"]').textContent(),
        /^ok-job-workload \(exec\)$/,
        'its workload id and kind',
      );
      t.same(
        await card('ok-job').locator('[data-testid="rank-exit"]').allTextContents(),
        ['exit 0', 'exit 0', 'exit 0'],
        'every rank: exit 0',
      );
      await shows('ok-job', 'log-tail', /^hello from rank 0$/, 20_000);
      t.pass("its log tail: rank 0's stdout");
      await card('ok-job').locator('[data-log="2/stdout"]').first().click();
      await shows('ok-job', 'log-tail', /^hello from rank 2$/, 20_000);
      t.pass("another rank's stdout on a click");

      await shows('bad-job', 'job-state', /^failed$/);
      t.equal(
        await card('bad-job').locator('[data-testid="exit-code"]').textContent(),
        'exit 3',
        'the failed job: exit 3',
      );
      t.match(
        await card('bad-job').locator('[data-testid="reason"]').textContent(),
        /^rank 1 \(node \S+\) exited with code 3/,
        'the reason names rank 1',
      );
      t.equal(
        await card('bad-job').locator('[data-testid="rank"][data-rank="1"] [data-testid="rank-exit"]').textContent(),
        'exit 3',
        'rank 1: exit 3',
      );
      await page.waitForFunction(
        () =>
          Array.from(document.querySelectorAll('[data-instance-id="bad-job"] [data-testid="rank-exit"]')).filter(
            (e) => e.textContent === 'stopped',
          ).length === 2,
        undefined,
        { timeout: 20_000 },
      );
      t.pass('ranks 0 and 2: stopped');
      await shows('bad-job', 'log-tail', /rank 1 gives up/, 20_000);
      t.pass("its log tail opens on the failing rank's stderr");
      t.same(
        await card('bad-job')
          .locator('[data-testid="rank"]')
          .evaluateAll((rows) => rows.map((r) => r.querySelector('.runner')?.textContent))
          .then((s) => s.length),
        3,
        'a status per rank',
      );

      // Delete from the page (the confirmation accepted): the card goes, the instance is gone cluster-wide.
      page.once('dialog', (d) => void d.accept());
      await card('ok-job').locator('[data-testid="delete"]').click();
      await page.waitForFunction(() => !document.querySelector('[data-instance-id="ok-job"]'), undefined, {
        timeout: 20_000,
      });
      await c.until(
        'the delete to reach another node',
        async () => (await c.nodes[2]!.fetch('/v1/instances/ok-job')).status === 404,
        10_000,
        200,
      );
      t.pass('deleted from the page: 404 on another node');

      phase('jobs checked');
      await c.converged(60_000, measured); // the reference line needs the measured links (usually done by now)
      phase('links measured');
      // A live ring benchmark, started while the page is open: its line fills in from the `bench` notices.
      const bench = await n0.fetch('/v1/bench/ring', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ minBytes: 1024, maxBytes: 1 << 20, stepFactor: 32, iterations: 2, warmup: 1 }),
      });
      t.equal(bench.status, 202, 'benchmark started');
      const runId = ((await bench.json()) as { id: string }).id;
      const line = page.locator(`[data-testid="bench-line"][data-run="${runId}"]`);
      await page.waitForFunction(
        (id) =>
          document.querySelector(`[data-testid="bench-line"][data-run="${id}"]`)?.getAttribute('data-points') === '3',
        runId,
        { timeout: 120_000 },
      );
      t.equal(await line.locator('circle').count(), 3, 'one point per size (1 KiB, 32 KiB, 1 MiB)');
      const reference = page.locator('[data-testid="bench-reference"]');
      const gbps = Number(await reference.getAttribute('data-gbps'));
      t.ok(gbps > 0.05 && gbps < 0.2, `the reference line is the measured 1 Gbit/s LAN: ${gbps} GB/s`);
      t.match(
        await reference.textContent(),
        /link capacity [\d.]+ (Mbit|Gbit)\/s/,
        'labelled with the measured link capacity',
      );
      const run = await c.until(
        'the run to finish',
        async () => {
          const r = await n0.get<{ status: string; result?: { rows: { busbw: number }[] } }>(`/v1/bench/ring/${runId}`);
          return r.status !== 'running' && r;
        },
        60_000,
        500,
      );
      t.equal(run.status, 'done', 'the benchmark finished');
      phase('benchmark drawn');
      const points = await line.locator('circle').evaluateAll((cs) => cs.map((e) => Number(e.getAttribute('cy'))));
      t.ok(
        points.every((y) => Number.isFinite(y) && y > 0 && y < 300),
        `points inside the chart (y ${points.join(', ')})`,
      );

      // A reload (the run is no longer announced): the chart comes back from GET /v1/bench/ring.
      await page.reload();
      await page.waitForSelector(`[data-testid="bench-line"][data-run="${runId}"][data-points="3"]`, {
        timeout: 20_000,
      });
      t.pass('after a reload, the run is drawn from the list of recent runs');
      await shows('bad-job', 'job-state', /^failed$/, 20_000);
      t.same(errors, [], 'no script errors');
    });
  },
);
