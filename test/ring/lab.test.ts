/** The ring across lab namespaces: one rank per namespace over thunderbolt-labelled p2p links and over the LAN, every op checked. */
import t from 'tap';
import { withLab } from '../../src/lab/index.js';
import { DTYPE_BYTES, type Dtype, type ReduceOp } from '../../src/native/kernels/index.js';
import { processLauncher, type RankMessage } from '../../src/ring/bench/launch.js';
import type { RankJob } from '../../src/ring/bench/rank-main.js';
import type { RankResult } from '../../src/ring/bench/sweep.js';

const N = 3;

t.test('3 ranks in 3 namespaces: every op, float32/float16/int32, exact', async (t) => {
  await withLab(t, { hosts: N, links: [{ a: 0, b: 1, label: 'thunderbolt' }, { a: 1, b: 2, label: 'thunderbolt' }, { a: 2, b: 0, label: 'thunderbolt' }] }, async (lab) => {
    const cases: { dtype: Dtype; redop: ReduceOp; over: 'p2p' | 'lan'; port: number }[] = [
      { dtype: 'float32', redop: 'sum', over: 'p2p', port: 32400 },
      { dtype: 'float16', redop: 'max', over: 'lan', port: 32410 },
      { dtype: 'int32', redop: 'min', over: 'p2p', port: 32420 },
    ];
    for (const { dtype, redop, over, port } of cases) {
      const elem = DTYPE_BYTES[dtype];
      // Elements: 1, n−1, 7 (not divisible by n), 1025 (odd), 262 145 (> 1 MiB of float32); all-gather sizes are totals.
      const sizes = [1, N - 1, 7, 1025, 262_145].map((count) => count * elem * N);
      const jobs: RankJob[] = Array.from({ length: N }, (_, rank) => ({
        connect: {
          rank, timeoutMs: 20_000, connectTimeoutMs: 20_000,
          hosts: Array.from({ length: N }, (_, j) => (j === rank ? { ip: '0.0.0.0', port } : { ip: over === 'p2p' ? lab.linkIp(rank, j) : (lab.hosts[j]?.lanIp ?? ''), port })),
        },
        sweep: { ops: ['all_reduce', 'all_gather', 'broadcast', 'sendrecv'], sizes, warmup: 0, iters: 1, check: true, dtype, redop, root: 1 },
      }));
      const rows: RankResult[][] = jobs.map(() => []);
      const errors: string[] = [];
      await processLauncher((rank, command, args) => lab.spawn(rank, command, args, { stdio: ['ignore', 'pipe', 'pipe'] }), 120_000)
        .run(jobs, (rank, message: RankMessage) => {
          if (message.type === 'row') rows[rank]?.push(message.row);
          if (message.type === 'error') errors.push(`rank ${rank}: ${message.code} ${message.message}`);
        });
      t.same(errors, [], `${dtype} over ${over}: no rank failed`);
      for (const [rank, list] of rows.entries()) {
        t.equal(list.length, 4 * sizes.length, `${dtype} over ${over}: rank ${rank} ran every op and size`);
        const wrong = list.filter((r) => r.wrong !== 0).map((r) => `${r.op} ${r.count}: ${r.wrong}`);
        t.same(wrong, [], `${dtype} ${redop} over ${over}: rank ${rank} bit-exact`);
      }
    }
  });
});
