/**
 * Jobs end to end: a real torch.distributed Gloo job (Debian's python3-torch) across 3 lab hosts, placed with
 * POST /v1/instances with nothing set by the test but the command: init_process_group("gloo") over env://,
 * all_reduce and all_gather, the job `completed` with exit code 0. (A failing rank and restart on-failure:
 * torch-job-fail-lab.test.ts; the set-up both share: fixtures/torch-lab.ts.)
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { why, withTorchLab } from './fixtures/torch-lab.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

t.test(
  'torch.distributed Gloo job across 3 lab hosts: all_reduce and all_gather, the job completes with exit code 0',
  { timeout: 178_000, skip: skipOrFail(why) },
  async (t) => {
    await withTorchLab(t, async ({ out, job, until }) => {
      // 1. Every rank runs to the end.
      const ok = await job('ok', -1, 'never');
      t.equal(ok.status, 201, `placed: ${JSON.stringify(ok.body).slice(0, 300)}`);
      const done = await until('ok', 'completed', 90_000);
      t.match(
        done,
        { status: 'completed', exitCode: 0, job: { state: 'completed', exitCode: 0 } },
        'the job is completed, exit code 0',
      );
      for (let r = 0; r < 3; r++) {
        const [sum, gathered, iface, master] = readFileSync(join(out, `ok-r${r}-x0`), 'utf8').split(' ');
        t.equal(sum, '6', `rank ${r}: all_reduce sum`);
        t.equal(gathered, '0,1,2', `rank ${r}: all_gather`);
        t.equal(iface, 'lan0', `rank ${r}: GLOO_SOCKET_IFNAME`);
        t.match(master, /^10\.77\./, `rank ${r}: MASTER_ADDR is rank 0's LAN address`);
      }
    });
  },
);
