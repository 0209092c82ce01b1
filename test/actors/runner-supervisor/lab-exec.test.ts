/**
 * Lab, real nodes (`node dist/main.js` per namespace): an exec workload placed across three hosts; every
 * runner sees its rank, the world size, a hostfile whose neighbour addresses are the planned ones and the
 * coordinator; deleting the instance stops every runner and its command.
 */
import t from 'tap';
import { Lab } from '../../../src/lab/index.js';
import { e2eUnavailableReason } from '../../e2e/lab-cluster.js';
import { instanceOn, jobsIn, profiled, recorderArgs, seen, withRunnerCluster } from './fixtures/lab-runners.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

t.test(
  '3 lab hosts: exec runners see rank, world size, planned hostfile and coordinator; delete stops them all',
  { timeout: 175_000, skip: skipOrFail(why) },
  async (t) => {
    await withRunnerCluster(t, { hosts: 3, ready: profiled, readyMs: 100_000 }, async ({ lab, c, out }) => {
      const pl = await c.cli(1, [
        'place',
        '--workload',
        'recorder',
        '--memory',
        '64MiB',
        '--layers',
        '6',
        '--min-nodes',
        '3',
        ...recorderArgs(out),
        '--instance-id',
        'rec-1',
      ]);
      t.equal(pl.code, 0, `place exits 0 (${pl.stdout.trim()} ${pl.stderr.trim()})`);
      // Placed through h1: h0 applies the entry a moment later (replication), so wait for it there, bounded.
      const inst = await c.until('h0 applied rec-1', () => instanceOn(c, 0, 'rec-1'), 10_000, 100);
      t.equal(inst.nodes.length, 3, `placed on three nodes: ${inst.nodes.join(' → ')}`);
      await c.until(
        'every rank ran its command',
        async () => [0, 1, 2].every((r) => seen(out, 'rec-1', 3, r)),
        60_000,
        500,
      );
      const ids = c.nodes.map((n) => n.id);
      const ipOf = (node: string) => lab.hosts[ids.indexOf(node)]!.lanIp;
      for (const [rank, node] of inst.nodes.entries()) {
        const s = seen(out, 'rec-1', 3, rank)!;
        t.match(
          s.env,
          {
            TORUS_RANK: String(rank),
            TORUS_WORLD_SIZE: '3',
            RANK: String(rank),
            WORLD_SIZE: '3',
            MLX_RANK: String(rank),
            TORUS_NODE_ID: node,
          },
          `rank ${rank} (${node}): rank and world size`,
        );
        t.same(
          s.hosts,
          inst.plan.hostsByNode![node]!.map((h) => `${h.ip}:${h.port}`),
          `rank ${rank}: the hostfile is the planned one`,
        );
        for (const nb of [(rank + 1) % 3, (rank + 2) % 3]) {
          t.equal(
            s.hosts[nb],
            `${ipOf(inst.nodes[nb]!)}:${inst.plan.port}`,
            `rank ${rank}: neighbour rank ${nb} at its LAN address`,
          );
        }
        t.equal(s.hosts[rank], `0.0.0.0:${inst.plan.port}`, `rank ${rank}: listens on all addresses`);
        const coordinator = ipOf(inst.nodes[0]!);
        t.equal(
          s.env.MASTER_ADDR,
          coordinator,
          `rank ${rank}: MASTER_ADDR is rank 0's planned LAN address (rank 0 included)`,
        );
        t.equal(s.env.GLOO_SOCKET_IFNAME, 'lan0', `rank ${rank}: Gloo binds the interface of its planned address`);
        t.equal(
          s.env.MLX_JACCL_COORDINATOR,
          rank === 0 ? `0.0.0.0:${inst.plan.port + 1}` : `${coordinator}:${inst.plan.port + 1}`,
          `rank ${rank}: coordinator`,
        );
      }
      await c.until(
        'runners Running everywhere',
        async () => {
          const v = await instanceOn(c, 2, 'rec-1');
          return v?.runners.every((r) => r.status === 'Running');
        },
        30_000,
        500,
      );
      for (let h = 0; h < 3; h++) t.equal(await jobsIn(lab, h), 1, `h${h}: the command runs in its namespace`);
      const de = await c.cli(0, ['delete', 'rec-1']);
      t.equal(de.code, 0, 'delete exits 0');
      await c.until(
        'every runner and command gone',
        async () => (await Promise.all([0, 1, 2].map((h) => jobsIn(lab, h)))).every((n) => n === 0),
        20_000,
        500,
      );
      t.pass('no command left in any namespace after delete');
    });
  },
);
