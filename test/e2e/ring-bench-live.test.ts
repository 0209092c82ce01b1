/**
 * End to end: `bench ring --live` — the CLI inside a lab host asks its node (POST /v1/bench/ring) to place a ring
 * instance over all three nodes, run all-reduce tasks as cluster tasks, and print the nccl-tests rows; every row
 * must be exact (#wrong 0) and the bench instance must be gone afterwards.
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason } from './lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

t.test('live ring benchmark over a 3-node lab cluster', { timeout: 170_000, skip: skipOrFail(why) }, async (t) => {
  await withLab(t, { hosts: 3, lanRate: '1gbit' }, async (lab) => {
    const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--iface-type', 'lan0=ethernet'] });
    await c.converged(90_000, (vs) => vs.every((v) => v.topology.links.length === 6)); // every LAN link is known
    const run = await c.cli(
      0,
      ['bench', 'ring', '--live', '--json', '--min-bytes', '1024', '--max-bytes', '1048576', '--step-factor', '32'],
      120_000,
    );
    if (run.code !== 0)
      t.fail(`bench exits 0, got ${run.code} (stdout: ${run.stdout.slice(-600)} stderr: ${run.stderr.slice(-400)})`);
    else t.pass('bench exits 0');
    type Row = {
      op: string;
      size: number;
      wrong: number;
      busbw: number;
      timeUs: number;
      medianUs: number;
      p99Us: number;
      bidirectional: boolean;
    };
    const result = JSON.parse(run.stdout) as { result?: { ring: string[]; rows: Row[] }; rows?: unknown };
    const body = (result.result ?? result) as { ring: string[]; rows: Row[] };
    t.equal(body.ring.length, 3, 'the ring spans the three nodes');
    t.same(
      body.rows.map((r) => r.size),
      [1024, 32768, 1048576],
      'the nccl-tests sweep sizes',
    );
    t.ok(
      body.rows.every((r) => r.op === 'all-reduce' && r.wrong === 0),
      'every row is exact',
    );
    t.ok(
      body.rows.every((r) => r.busbw > 0),
      'and has a bus bandwidth',
    );
    t.ok(
      body.rows.every((r) => r.medianUs > 0 && r.p99Us >= r.medianUs && r.timeUs > 0),
      `per-op median and p99 beside the mean (${body.rows.map((r) => `${r.timeUs}/${r.medianUs}/${r.p99Us} µs`).join(', ')})`,
    );
    t.ok(
      body.rows.every((r) => r.bidirectional === false),
      'one ring direction: every node reaches both neighbours through its one LAN interface',
    );
    const after = await c.until(
      'the bench instance to be deleted',
      async () => {
        const views = await c.views();
        return views?.every(
          (v) => Object.keys((v.state.state as unknown as { instances: object }).instances).length === 0,
        )
          ? views
          : null;
      },
      20_000,
    );
    t.ok(after, 'no instance left behind');
  });
});
