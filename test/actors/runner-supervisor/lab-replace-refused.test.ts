/**
 * Lab, real nodes: an instance that needs all three hosts loses one; it cannot be re-placed on the two that
 * remain, so it is reported failed with the reason, and the remaining runners stop.
 */
import t from 'tap';
import { Lab } from '../../../src/lab/index.js';
import { e2eUnavailableReason } from '../../e2e/lab-cluster.js';
import { instanceOn, jobsIn, profiled, recorderArgs, seen, withRunnerCluster } from './fixtures/lab-runners.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

t.test(
  'kill a host when the rest cannot hold the instance: reported failed with the reason, runners stopped',
  { timeout: 175_000, skip: skipOrFail(why) },
  async (t) => {
    await withRunnerCluster(
      t,
      { hosts: 3, failureTimeoutMs: 3000, ready: profiled, readyMs: 100_000 },
      async ({ lab, c, vs, out }) => {
        const leader = vs.find((v) => v.node.role === 'leader')!.node.id;
        // More memory than any two hosts have: it needs all three, and cannot live on the two that remain.
        const ram = Math.max(...vs[0]!.topology.nodes.map((n) => n.memory!.ramAvailable));
        const memory = String(Math.floor(ram * 2.3));
        const pl = await c.cli(0, [
          'place',
          '--workload',
          'recorder',
          '--memory',
          memory,
          '--layers',
          '6',
          ...recorderArgs(out),
          '--instance-id',
          'all-3',
        ]);
        t.equal(pl.code, 0, `place exits 0 (${pl.stdout.trim()} ${pl.stderr.trim()})`);
        await c.until('every rank ran', async () => [0, 1, 2].every((r) => seen(out, 'all-3', 3, r)), 60_000, 500);
        const ids = c.nodes.map((n) => n.id);
        const victimHost = ids.findIndex((id) => id !== leader);
        c.nodes[victimHost]!.kill('SIGKILL');
        const live = [0, 1, 2].filter((h) => h !== victimHost);
        const failed = await c.until(
          'instance reported failed',
          async () => {
            const v = await instanceOn(c, live[0]!, 'all-3');
            return v && v.status === 'failed' && v;
          },
          60_000,
          300,
        );
        t.match(failed.reason, /memory/i, `the reason says why (memory): ${failed.reason}`);
        await c.until(
          'runners stopped on the remaining hosts',
          async () => (await Promise.all(live.map((h) => jobsIn(lab, h)))).every((n) => n === 0),
          20_000,
          500,
        );
        t.pass('no command left on the remaining hosts');
        t.equal(await jobsIn(lab, victimHost), 0, 'nothing of the killed node survives');
      },
    );
  },
);
