/**
 * Jobs end to end: `node dist/main.js run --restart on-failure:2 -- CMD` on a real 3-host lab cluster. Rank 0
 * fails on the first run only: the group reruns (TORCHELASTIC_RESTART_COUNT=1), both runs' lines reach the terminal
 * prefixed, and run exits 0: it does not stop at the failure that triggers the restart (job state `restarting`).
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { E2eCluster, e2eUnavailableReason } from './lab-cluster.js';
import { finished, procsWith, startRun } from './fixtures/run-cli.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

t.test(
  "torus run --restart on-failure: the group reruns and run exits with the rerun's code",
  { timeout: 178_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet'] });
      await c.converged(100_000, profiled);
      // Rank 0 exits 5 on the first run only; the others wait to be stopped. The rerun completes.
      const again = startRun(c, 0, [
        '--min-nodes',
        '3',
        '--instance-id',
        'again',
        '--restart',
        'on-failure:2',
        '--',
        '/bin/sh',
        '-c',
        'echo "run $TORCHELASTIC_RESTART_COUNT rank $RANK"; if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ]; then if [ "$RANK" = 0 ]; then exit 5; fi; exec sleep 318; fi',
      ]);
      t.same(
        await finished(again, 120_000),
        { code: 0, signal: null },
        `run exits 0 once the restarted group completes (stderr: ${again.out.stderr.slice(-500)})`,
      );
      // Which of the two it prints depends on whether a poll saw the short `restarting` state; both name the cause.
      t.match(
        again.out.stderr,
        /job again (failed \(rank 0 .*code 5.*\); restarting the group|restarted \(restart 1 of 2, .*rank 0 .*code 5)/,
        'it says the group restarts after rank 0 failed',
      );
      for (let r = 0; r < 3; r++)
        t.match(
          again.out.stdout,
          new RegExp(`^\\[rank ${r} h\\d\\] run 1 rank ${r}$`, 'm'),
          `rank ${r}: the rerun's line reached the terminal`,
        );
      t.match(again.out.stdout, /^\[rank 0 h\d\] run 0 rank 0$/m, "the first run's line of rank 0 too");
      t.same(await procsWith(lab, 'sleep 318'), [0, 0, 0], 'no rank of the first run is left');
    });
  },
);
