/**
 * The Gloo benchmark, live path: POST /v1/bench/ring with `gloo: true` on a 3-node lab cluster (1 Gbit/s LAN).
 * h0 and h1 allow `python3`, h2 allows no exec at all.
 *  - Over h0, h1 (`bench ring --live --gloo`, which sends `gloo: true`): the node runs the ring, then torch Gloo's
 *    all_reduce on the same nodes as a torus job, and the result carries Gloo's rows at the ring's sizes and the
 *    ratio per size; the dashboard draws a Gloo line for the run; neither leaves an instance behind.
 *  - Over all three: refused at once (409) naming h2's exec policy, and nothing starts (no ring, no job): `gloo`
 *    is no way around `--allow-exec`. An interpreter the nodes do not allow is refused the same way.
 * The ratio itself is a measurement, not asserted here (benchmarks/ring-live).
 */
import t from 'tap';
import { withLab } from '../../src/lab/index.js';
import { chromiumSkipReason, openBrowserPage } from '../fixtures/browser.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { why } from './fixtures/torch-lab.js';
import { E2eCluster } from './lab-cluster.js';
import { skipOrFail, partRuns } from '../fixtures/skip-or-fail.js';

// A multi-node lab on a shared 2-core machine (forming the cluster alone took 70 s at load 20): more than the
// default per-file timeout, so a slow CI machine does not cut a healthy run; each wait inside stays bounded.
t.setTimeout(360_000);

type Row = { op: string; size: number; busbw: number };
interface Run {
  id: string;
  status: string;
  result: {
    ring: string[];
    rows: Row[];
    gloo?: { ok: boolean; reason?: string; rows?: { bytes: number; busbw: number }[] };
    vsGloo?: { size: number; ratio: number | null }[];
  };
}

t.test(
  'POST /v1/bench/ring gloo: ring and torch Gloo side by side; refused where --allow-exec says no',
  { timeout: 340_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3, lanRate: '1gbit' }, async (lab) => {
      const c = await E2eCluster.start(t, lab, {
        nodeArgs: (h) => [...(h < 2 ? ['--allow-exec=python3'] : []), '--iface-type', 'lan0=ethernet'],
      });
      const vs = await c.converged(100_000, profiled);
      const idOf = (host: number): string => vs.find((v) => v.host === host)!.node.id;
      const n0 = c.nodes[0]!;
      const instances = async (): Promise<unknown[] | undefined> =>
        (await n0.tryGet<{ instances: unknown[] }>('/v1/instances'))?.instances;

      // Refusals first (they must start nothing): h2 allows no exec; an interpreter nobody allows.
      const before = (await n0.get<{ runs: unknown[] }>('/v1/bench/ring')).runs.length;
      const post = (body: unknown) =>
        n0.fetch('/v1/bench/ring', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const refused = await post({ gloo: true, minBytes: 1 << 20, maxBytes: 1 << 20 });
      const refusal = (await refused.json()) as { error: { code: string; message: string } };
      t.equal(refused.status, 409, 'gloo over a node without --allow-exec: 409');
      t.equal(refusal.error.code, 'TORUS_PLACEMENT_REFUSED');
      t.match(
        refusal.error.message,
        new RegExp(`${idOf(2)}.*exec is off \\(no --allow-exec\\)`),
        `names h2 and its policy: ${refusal.error.message}`,
      );
      t.notMatch(refusal.error.message, new RegExp(idOf(0)), 'and only the nodes that refuse');
      const other = await post({
        gloo: true,
        glooPython: '/usr/bin/python3.99',
        nodes: [idOf(0), idOf(1)],
        minBytes: 1 << 20,
        maxBytes: 1 << 20,
      });
      t.equal(other.status, 409, 'an interpreter the nodes do not allow: 409');
      t.match(
        ((await other.json()) as { error: { message: string } }).error.message,
        /python3\.99.*--allow-exec=python3/,
        'naming the interpreter and the policy',
      );
      t.equal((await post({ gloo: true, glooPython: 'python3' })).status, 400, 'glooPython must be an absolute path');
      t.equal(
        (await n0.get<{ runs: unknown[] }>('/v1/bench/ring')).runs.length,
        before,
        'no benchmark run was started',
      );
      t.same(await instances(), [], 'nor any instance');

      // The comparison through the CLI, which sends gloo: true (one implementation, on the node).
      const run = await c.cli(
        0,
        [
          'bench',
          'ring',
          '--live',
          '--gloo',
          '--json',
          '--nodes',
          `${idOf(0)},${idOf(1)}`,
          '-b',
          '1M',
          '-e',
          '4M',
          '-f',
          '4',
          '-n',
          '3',
          '-w',
          '1',
        ],
        200_000,
      );
      t.equal(run.code, 0, `bench exits 0 (stderr: ${run.stderr.slice(-400)})`);
      const out = JSON.parse(run.stdout) as Run;
      t.same([...out.result.ring].sort(), [idOf(0), idOf(1)].sort(), 'the ring spans the two chosen nodes');
      const gloo = out.result.gloo;
      t.ok(gloo?.ok, `the Gloo run succeeded${gloo?.reason ? `: ${gloo.reason}` : ''}`);
      const ringSizes = out.result.rows.filter((r) => r.op === 'all-reduce').map((r) => r.size);
      t.same(
        gloo?.rows?.map((r) => r.bytes),
        ringSizes,
        "Gloo timed at the ring's sizes",
      );
      t.ok(
        gloo?.rows?.every((r) => r.busbw > 0),
        'with a bus bandwidth per size',
      );
      t.same(
        out.result.vsGloo?.map((r) => r.size),
        ringSizes,
        'a ring ÷ Gloo ratio per size',
      );
      t.ok(
        out.result.vsGloo?.every((r) => typeof r.ratio === 'number' && r.ratio > 0),
        'each a positive number',
      );
      t.comment(
        `ring/Gloo busbw by size (load ${(await import('node:os')).loadavg()[0]!.toFixed(1)}): ${out.result.vsGloo?.map((r) => `${r.size} B ${r.ratio?.toFixed(2)}×`).join(', ')}`,
      );
      await c.until('no instance left', async () => (await instances())?.length === 0, 20_000, 300);
      t.pass('neither benchmark leaves an instance behind');

      // The dashboard draws the run's Gloo line (from GET /v1/bench/ring on load), one point per size.
      if (partRuns(t, "the dashboard's Gloo line", await chromiumSkipReason())) {
        const { page, errors } = await openBrowserPage(t);
        await page.goto(`${n0.api}/?token=${n0.token}`);
        await page.waitForSelector(
          `[data-testid="bench-gloo-line"][data-run="${out.id}"][data-points="${ringSizes.length}"]`,
          { timeout: 30_000 },
        );
        t.match(
          await page.locator(`li[data-run="${out.id}"]`).textContent(),
          /torch Gloo \(dashed\): ring [\d.]+× Gloo/,
          'the legend gives ring ÷ Gloo',
        );
        t.same(errors, [], 'no script errors');
      }
    });
  },
);
