/**
 * Lab, real node: SIGTERM a node whose runners are mid-task (two exec jobs running their commands):
 * it exits 0, with nothing left behind in its namespace and no unhandled rejection in its log.
 */
import t from 'tap';
import { Lab } from '../../../src/lab/index.js';
import { e2eUnavailableReason } from '../../e2e/lab-cluster.js';
import { instanceOn, jobsIn, recorderArgs, seen, withRunnerCluster } from './fixtures/lab-runners.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

t.test(
  'node shutdown with runners mid-task: exit code 0, no runner or command left',
  { timeout: 175_000, skip: skipOrFail(why) },
  async (t) => {
    await withRunnerCluster(
      t,
      { hosts: 1, ready: (vs) => vs[0]!.topology.nodes[0]?.memory !== undefined, readyMs: 60_000 },
      async ({ lab, c, out }) => {
        for (const id of ['job-a', 'job-b']) {
          const pl = await c.cli(0, [
            'place',
            '--workload',
            id,
            '--memory',
            '64MiB',
            '--layers',
            '2',
            ...recorderArgs(out),
            '--instance-id',
            id,
          ]);
          t.equal(pl.code, 0, `place ${id} (${pl.stdout.trim()} ${pl.stderr.trim()})`);
        }
        await c.until(
          'both jobs running',
          async () =>
            seen(out, 'job-a', 1, 0) &&
            seen(out, 'job-b', 1, 0) &&
            (await instanceOn(c, 0, 'job-b'))?.runners.every((r) => r.status === 'Running'),
          60_000,
          500,
        );
        t.equal(await jobsIn(lab, 0), 2, 'two commands running');
        const node = c.nodes[0]!;
        const started = Date.now();
        await node.stop('SIGTERM', 15_000);
        t.equal(node.exit?.code, 0, `node exited 0 (${JSON.stringify(node.exit)})`);
        t.ok(Date.now() - started < 12_000, `shut down in ${Date.now() - started} ms`);
        t.equal(await jobsIn(lab, 0), 0, 'no command left in the namespace');
        const runners = (
          await lab.exec(
            0,
            `for p in $(ip netns pids ${lab.hosts[0]!.ns}); do cat /proc/$p/cmdline 2>/dev/null | tr '\\0' ' '; echo; done`,
          )
        ).stdout
          .split('\n')
          .filter((l) => l.includes('runner-main'));
        t.same(runners, [], 'no runner process left');
        t.notMatch(node.stderr, /unhandled|UnhandledPromiseRejection/i, 'no unhandled rejection');
      },
    );
  },
);
