/**
 * Jobs end to end: `node dist/main.js run -- CMD` on a real 3-host lab cluster (nodes with --allow-exec), the
 * CLI itself running inside host 0's namespace as a user on that machine would run it.
 * - every line each rank prints reaches the terminal prefixed `[rank N node]`, in order per rank (stdout and stderr);
 * - the exit code is the job's: a rank exiting 3 → `run` exits 3 and says which rank, the other ranks are stopped;
 *   a rank killed by SIGKILL → 137 (128 + 9, as a shell reports it).
 * (Ctrl-C: run-interrupt-lab.test.ts; --restart on-failure: run-restart-lab.test.ts.)
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { E2eCluster, e2eUnavailableReason } from './lab-cluster.js';
import { finished, procsWith, startRun } from './fixtures/run-cli.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

// A multi-node lab on a shared 2-core machine (forming the cluster alone took 70 s at load 20): more than the
// default per-file timeout, so a slow CI machine does not cut a healthy run; each wait inside stays bounded.
t.setTimeout(360_000);

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

t.test(
  'torus run on 3 lab hosts: prefixed output in order per rank, the job exit code',
  { timeout: 340_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet'] });
      await c.converged(100_000, profiled);

      // 1. Numbered lines on stdout (paced, so the streams interleave across ranks) and one line on stderr.
      const LINES = 25;
      const lines = startRun(c, 0, [
        '--min-nodes',
        '3',
        '--instance-id',
        'lines',
        '--',
        '/bin/sh',
        '-c',
        `i=1; while [ $i -le ${LINES} ]; do echo "line $i of rank $RANK"; i=$((i+1)); sleep 0.02; done; echo "done $RANK" >&2`,
      ]);
      t.same(
        await finished(lines, 60_000),
        { code: 0, signal: null },
        `run exits 0 when every rank exits 0 (stderr: ${lines.out.stderr.slice(-400)})`,
      );
      for (let r = 0; r < 3; r++) {
        const mine = lines.out.stdout.split('\n').filter((l) => l.startsWith(`[rank ${r} `));
        t.equal(mine.length, LINES, `rank ${r}: all ${LINES} lines on stdout`);
        const host = /^\[rank \d+ (\S+)\] /.exec(mine[0] ?? '')?.[1];
        t.match(host, /^h[0-2]$/, `rank ${r}: the prefix names its node (${host})`);
        t.same(
          mine,
          Array.from({ length: LINES }, (_, i) => `[rank ${r} ${host}] line ${i + 1} of rank ${r}`),
          `rank ${r}: every line, prefixed, in order`,
        );
        t.match(
          lines.out.stderr,
          new RegExp(`^\\[rank ${r} ${host}\\] done ${r}$`, 'm'),
          `rank ${r}: its stderr line on stderr, prefixed`,
        );
      }
      t.equal(
        new Set(
          lines.out.stdout
            .split('\n')
            .filter(Boolean)
            .map((l) => /^\[rank \d+ (\S+)\]/.exec(l)?.[1]),
        ).size,
        3,
        'three distinct nodes',
      );

      // 2. Rank 1 exits 3; ranks 0 and 2 would sleep on: run exits 3 naming rank 1, the sleepers are stopped.
      const bad = startRun(c, 0, [
        '--min-nodes',
        '3',
        '--instance-id',
        'bad',
        '--',
        '/bin/sh',
        '-c',
        'if [ "$RANK" = 1 ]; then echo "rank 1 gives up" >&2; exit 3; fi; exec sleep 311',
      ]);
      t.same(await finished(bad, 90_000), { code: 3, signal: null }, "run exits with the failing rank's code 3");
      t.match(
        bad.out.stderr,
        /job bad failed: rank 1 \(node \S+\) exited with code 3/,
        `run says which rank failed: ${bad.out.stderr.slice(-300)}`,
      );
      t.match(bad.out.stderr, /^\[rank 1 h\d\] rank 1 gives up$/m, "the failing rank's stderr reached the terminal");
      await c.until(
        'the sleeping ranks stopped',
        async () => (await procsWith(lab, 'sleep 311')).every((n) => n === 0),
        20_000,
        250,
      );
      t.pass('no rank of the failed job is left on any node');

      // 3. Rank 2 is killed by SIGKILL (it kills its own shell): 128 + 9.
      const killed = startRun(c, 0, [
        '--min-nodes',
        '3',
        '--instance-id',
        'killed',
        '--',
        '/bin/sh',
        '-c',
        'if [ "$RANK" = 2 ]; then kill -KILL $$; fi; exec sleep 312',
      ]);
      t.same(
        await finished(killed, 90_000),
        { code: 137, signal: null },
        `run exits 137 for a rank killed by SIGKILL (stderr: ${killed.out.stderr.slice(-300)})`,
      );
      t.match(killed.out.stderr, /job killed failed: rank 2 .*SIGKILL/, 'and says rank 2 was killed by SIGKILL');
      await c.until(
        'the sleeping ranks stopped',
        async () => (await procsWith(lab, 'sleep 312')).every((n) => n === 0),
        20_000,
        250,
      );
    });
  },
);
