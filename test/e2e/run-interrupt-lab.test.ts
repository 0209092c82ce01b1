/**
 * Jobs end to end: Ctrl-C on `node dist/main.js run -- CMD` (SIGINT to the `run` process, inside host 0 of a
 * real 3-host lab cluster) stops the job on every node: each rank's process is gone in each namespace, the instance
 * is deleted, and `run` exits 130 as a shell reports a command ended by SIGINT. Also pressed while the job is still
 * being placed (it is stopped once it exists), and twice (run exits 130, the job is still deleted).
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { E2eCluster, e2eUnavailableReason } from './lab-cluster.js';
import { finished, procsWith, startRun } from './fixtures/run-cli.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

t.test(
  'Ctrl-C on torus run stops every rank on every node and exits 130',
  { timeout: 178_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet'] });
      await c.converged(100_000, profiled);
      const gone = async (id: string) =>
        (await c.nodes[1]!.fetch(`/v1/instances/${id}`, { signal: AbortSignal.timeout(5000) })).status === 404;

      // 1. While every rank sleeps.
      const sleepers = startRun(c, 0, [
        '--min-nodes',
        '3',
        '--instance-id',
        'sleepers',
        '--',
        '/bin/sh',
        '-c',
        'echo "rank $RANK up"; exec sleep 313',
      ]);
      await c.until(
        'every rank started and printed',
        async () => [0, 1, 2].every((r) => sleepers.out.stdout.includes(`rank ${r} up`)) && sleepers,
        60_000,
        200,
      );
      t.same(await procsWith(lab, 'sleep 313'), [1, 1, 1], 'one sleeping rank on each node');
      sleepers.child.kill('SIGINT');
      t.same(
        await finished(sleepers, 30_000),
        { code: 130, signal: null },
        `run exits 130 after Ctrl-C (stderr: ${sleepers.out.stderr.slice(-300)})`,
      );
      t.match(sleepers.out.stderr, /stopping job sleepers on every node/, 'it says it stops the job');
      await c.until(
        'every rank stopped',
        async () => (await procsWith(lab, 'sleep 313')).every((n) => n === 0),
        20_000,
        250,
      );
      t.pass('the ranks on all three nodes are gone');
      t.ok(await gone('sleepers'), 'the instance is deleted cluster-wide');

      // 2. While the job is being placed: the POST is under way (or just answered) when SIGINT arrives.
      const early = startRun(c, 0, [
        '--min-nodes',
        '3',
        '--instance-id',
        'early',
        '--',
        '/bin/sh',
        '-c',
        'exec sleep 314',
      ]);
      await c.until('run to start placing', async () => early.out.stderr.includes('torus: placing'), 30_000, 20);
      early.child.kill('SIGINT');
      t.same(
        await finished(early, 30_000),
        { code: 130, signal: null },
        `run handles the early Ctrl-C and exits 130 (stderr: ${early.out.stderr.slice(-300)})`,
      );
      await c.until('the early job deleted', () => gone('early'), 20_000, 250);
      await c.until(
        'no rank of it running',
        async () => (await procsWith(lab, 'sleep 314')).every((n) => n === 0),
        20_000,
        250,
      );
      t.pass('the job placed during the Ctrl-C is deleted and none of its ranks runs');

      // 3. Twice in a row: run stops waiting at once, the job is still deleted everywhere.
      const twice = startRun(c, 0, [
        '--min-nodes',
        '3',
        '--instance-id',
        'twice',
        '--',
        '/bin/sh',
        '-c',
        'echo "rank $RANK up"; exec sleep 315',
      ]);
      await c.until(
        'every rank started',
        async () => [0, 1, 2].every((r) => twice.out.stdout.includes(`rank ${r} up`)) && twice,
        60_000,
        200,
      );
      // The second only once the first was seen (two signals sent at once may be delivered as one). Whether it lands
      // while run still waits ("second Ctrl-C") or as run exits, run must exit 130, not be killed by it.
      twice.child.kill('SIGINT');
      await c.until(
        'run to start stopping the job',
        async () => twice.out.stderr.includes('stopping job twice'),
        20_000,
        20,
      );
      twice.child.kill('SIGINT');
      t.same(
        await finished(twice, 30_000),
        { code: 130, signal: null },
        `run exits 130 after two Ctrl-C (stderr: ${twice.out.stderr.slice(-200)})`,
      );
      await c.until('the twice job deleted', () => gone('twice'), 20_000, 250);
      await c.until(
        'its ranks stopped',
        async () => (await procsWith(lab, 'sleep 315')).every((n) => n === 0),
        20_000,
        250,
      );
      t.pass('the job is deleted and its ranks are gone after a double Ctrl-C');
    });
  },
);
