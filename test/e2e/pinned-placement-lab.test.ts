/**
 * Pinned placements end to end: `node dist/main.js place --nodes A,B,C` and `run --nodes A,B -- CMD` on a real
 * 3-host lab cluster (nodes with --allow-exec), the CLI running inside host 0's namespace as a user there would.
 * - `place --nodes` places exactly those nodes in that rank order, each rank dialling the next at its address;
 * - a pinned set that cannot hold the workload is refused with the planner's reason, and nothing is placed;
 * - `run --nodes` runs rank r on the r-th node given.
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { E2eCluster, e2eUnavailableReason } from './lab-cluster.js';
import { finished, startRun } from './fixtures/run-cli.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

t.setTimeout(360_000);

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

interface PlacedView {
  id: string;
  nodes: string[];
  pinned?: boolean;
  plan: { port: number; hostsByNode?: Record<string, { ip: string; port: number }[]> };
}

t.test(
  'place --nodes and run --nodes on 3 lab hosts: the pinned order, refusals with the reason',
  { timeout: 340_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet'] });
      await c.converged(100_000, profiled);
      const id = (h: number) => c.nodes[h]!.id as string;
      const hostOf = new Map([0, 1, 2].map((h) => [id(h), h]));
      const instances = async () =>
        ((await (await c.nodes[0]!.fetch('/v1/instances')).json()) as { instances: PlacedView[] }).instances.map(
          (i) => i.id,
        );

      // 1. place --nodes h2,h0,h1: that order, not the planner's (which would take one node for 3 MiB).
      const order = [id(2), id(0), id(1)];
      const placed = await c.cli(
        0,
        ['place', '--workload', 'w', '--memory', '3MiB', '--layers', '3', '--nodes', order.join(','), '--json'],
        60_000,
      );
      t.equal(placed.code, 0, `place exits 0 (stderr: ${placed.stderr.slice(-400)})`);
      const view = JSON.parse(placed.stdout) as PlacedView;
      t.same(view.nodes, order, 'ranks in the pinned order');
      t.equal(view.pinned, true, 'the instance says it is pinned');
      for (const [r, node] of order.entries()) {
        const next = order[(r + 1) % 3] as string;
        t.same(
          view.plan.hostsByNode?.[node]?.[(r + 1) % 3],
          { ip: lab.hosts[hostOf.get(next) as number]!.lanIp, port: view.plan.port },
          `rank ${r} (h${hostOf.get(node)}) dials rank ${(r + 1) % 3} at h${hostOf.get(next)}'s address`,
        );
      }
      const gone = await c.nodes[0]!.fetch(`/v1/instances/${encodeURIComponent(view.id)}`, { method: 'DELETE' });
      t.equal(gone.status, 200, 'deleted');
      await c.until('the instance to be gone', async () => (await instances()).length === 0, 30_000);

      // 2. A pinned set that cannot hold the workload: the planner's reason, nothing placed.
      const big = await c.cli(
        0,
        ['place', '--workload', 'w', '--memory', '64TiB', '--layers', '3', '--nodes', `${id(1)},${id(2)}`],
        60_000,
      );
      t.equal(big.code, 1, 'place exits 1');
      t.match(big.stderr, `The pinned nodes ${id(1)}, ${id(2)} cannot hold w: not enough memory`, big.stderr);
      t.match(big.stderr, 'TORUS_PLACEMENT_REFUSED');
      const ghost = await c.cli(0, [
        'place',
        '--workload',
        'w',
        '--memory',
        '1MiB',
        '--layers',
        '3',
        '--nodes',
        `${id(1)},ghost`,
      ]);
      t.equal(ghost.code, 1);
      t.match(ghost.stderr, /not nodes of the cluster: ghost \(TORUS_NODE_UNKNOWN\)/);
      t.same(await instances(), [], 'no refusal placed anything');

      // 3. run --nodes h1,h0: rank 0 on h1, rank 1 on h0.
      const run = startRun(c, 0, [
        '--nodes',
        `${id(1)},${id(0)}`,
        '--instance-id',
        'pinned-run',
        '--',
        '/bin/sh',
        '-c',
        'echo "rank $RANK on $TORUS_NODE_ID"',
      ]);
      t.same(
        await finished(run, 90_000),
        { code: 0, signal: null },
        `run exits 0 (stderr: ${run.out.stderr.slice(-400)})`,
      );
      t.match(run.out.stderr, `torus: placing /bin/sh on ${id(1)}, ${id(0)} (pinned)`);
      t.match(run.out.stdout, new RegExp(`^\\[rank 0 h1\\] rank 0 on ${id(1)}$`, 'm'), 'rank 0 ran on h1');
      t.match(run.out.stdout, new RegExp(`^\\[rank 1 h0\\] rank 1 on ${id(0)}$`, 'm'), 'rank 1 ran on h0');
    });
  },
);
