/**
 * Lab, real nodes: kill one host of a running two-host instance (it needs more memory than one host has); the
 * leader re-places it on the two remaining hosts and their runners start again on the new plan (the killed host's runner and command die with their node).
 */
import t from 'tap';
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Lab } from '../../../src/lab/index.js';
import { e2eUnavailableReason } from '../../e2e/lab-cluster.js';
import {
  instanceOn,
  jobsIn,
  profiled,
  recorded,
  recorderArgs,
  seen,
  withRunnerCluster,
} from './fixtures/lab-runners.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();

t.test(
  'kill a host of an instance: re-placed on the remaining hosts within seconds, runners restarted there',
  { timeout: 175_000, skip: skipOrFail(why) },
  async (t) => {
    await withRunnerCluster(
      t,
      { hosts: 3, failureTimeoutMs: 3000, ready: profiled, readyMs: 100_000 },
      async ({ lab, c, vs, out }) => {
        const leader = vs.find((v) => v.node.role === 'leader')!.node.id;
        // More than one host's memory, less than two: the smallest set that holds it has two hosts, and any two can.
        const ram = Math.min(...vs[0]!.topology.nodes.map((n) => n.memory!.ramAvailable));
        const memory = String(Math.floor(ram * 1.4));
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
          'mv-1',
        ]);
        t.equal(pl.code, 0, `place exits 0 (${pl.stdout.trim()} ${pl.stderr.trim()})`);
        const before = await c.until('h0 applied mv-1', () => instanceOn(c, 0, 'mv-1'), 10_000, 100);
        t.equal(before.nodes.length, 2, `placed on two of three: ${before.nodes.join(' → ')}`);
        await c.until('both ranks ran', async () => [0, 1].every((r) => seen(out, 'mv-1', 2, r)), 60_000, 500);
        const ids = c.nodes.map((n) => n.id);
        const victim = before.nodes.find((n) => n !== leader)!;
        const victimHost = ids.indexOf(victim);
        for (const f of recorded(out)) unlinkSync(join(out, f));
        const killedAt = Date.now();
        c.nodes[victimHost]!.kill('SIGKILL');
        const live = [0, 1, 2].filter((h) => h !== victimHost);
        let last: unknown;
        t.teardown(() => {
          if (!t.passing()) t.comment(`last instance view: ${JSON.stringify(last)}`);
        });
        const after = await c.until(
          're-placed and Running on the remaining hosts',
          async () => {
            const v = await instanceOn(c, live[0]!, 'mv-1');
            last = v && { ...v, plan: undefined };
            return (
              v &&
              v.generation >= 2 &&
              v.status === 'active' &&
              !v.nodes.includes(victim) &&
              v.runners.every((r) => r.status === 'Running') &&
              v
            );
          },
          60_000,
          300,
        );
        const took = Date.now() - killedAt;
        t.pass(
          `re-placed on ${after.nodes.join(' → ')} and Running ${took} ms after the kill (failure timeout 3000 ms)`,
        );
        t.ok(took < 45_000, 'within seconds (bounded generously: the machine is shared)');
        t.same([...after.nodes].sort(), live.map((h) => ids[h]).sort(), 'the two remaining hosts');
        await c.until(
          'both ranks of the new plan ran',
          async () => [0, 1].every((r) => seen(out, 'mv-1', 2, r)),
          30_000,
          500,
        );
        for (const [rank, node] of after.nodes.entries()) {
          const s = seen(out, 'mv-1', 2, rank)!;
          t.equal(s.env.TORUS_NODE_ID, node, `rank ${rank} runs on ${node}`);
          t.same(
            s.hosts,
            after.plan.hostsByNode![node]!.map((h) => `${h.ip}:${h.port}`),
            `rank ${rank}: hostfile of the new plan`,
          );
          t.equal(
            s.hosts[1 - rank],
            `${lab.hosts[ids.indexOf(after.nodes[1 - rank]!)]!.lanIp}:${after.plan.port}`,
            `rank ${rank}: its new neighbour`,
          );
        }
        t.equal(await jobsIn(lab, victimHost), 0, 'nothing of the killed node survives in its namespace');
        for (const h of live) t.equal(await jobsIn(lab, h), 1, `h${h}: exactly one command (the old one was stopped)`);
      },
    );
  },
);
