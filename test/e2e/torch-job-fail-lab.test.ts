/**
 * Jobs end to end: a real torch.distributed Gloo job (Debian's python3-torch) across 3 lab hosts, placed with
 * POST /v1/instances with nothing set by the test but the command (the script and set-up of fixtures/torch-lab.ts). One rank
 * exits 3 after the collectives: the others are stopped
 * within seconds and the job is `failed` naming that rank and code 3. Then `restart: on-failure` reruns the group
 * and the rerun completes.
 */
import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { scriptProcs, why, withTorchLab } from './fixtures/torch-lab.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

t.test(
  'torch.distributed Gloo job across 3 lab hosts: a failing rank stops the group; on-failure restarts it',
  { timeout: 178_000, skip: skipOrFail(why) },
  async (t) => {
    await withTorchLab(t, async ({ lab, c, script, out, job, until }) => {
      // 2. Rank 1 exits 3 after the collectives; ranks 0 and 2 would sleep on.
      const bad = await job('bad', 1, 'always');
      t.equal(bad.status, 201);
      const failed = await until('bad', 'failed', 90_000);
      const failedAt = Date.now();
      t.match(
        failed,
        {
          exitCode: 3,
          job: { state: 'failed', exitCode: 3, failedRank: 1 },
          reason: /^rank 1 \(node \S+\) exited with code 3; stderr: .*rank failing on purpose/,
        },
        `failed naming rank 1 and code 3: ${failed.reason}`,
      );
      await c.until(
        'the other ranks stopped',
        async () => (await Promise.all([0, 1, 2].map((h) => scriptProcs(lab, h, script)))).every((n) => n === 0),
        20_000,
        250,
      );
      t.ok(
        Date.now() - failedAt < 20_000,
        `every rank stopped ${Date.now() - failedAt} ms after the failure was recorded`,
      );

      // 3. restart on-failure: rank 1 fails on the first run only; the group reruns (restart count 1) and completes.
      const again = await job('again', 1, 'first', { restart: { policy: 'on-failure', max: 2 } });
      t.equal(again.status, 201);
      const rerun = await until('again', 'completed', 120_000);
      t.match(rerun, { job: { state: 'completed', restarts: 1, exitCode: 0 } }, 'completed after one group restart');
      for (let r = 0; r < 3; r++)
        t.ok(existsSync(join(out, `again-r${r}-x1`)), `rank ${r} ran again (TORCHELASTIC_RESTART_COUNT=1)`);
    });
  },
);
