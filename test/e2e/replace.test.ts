/**
 * End to end, real processes: an exec workload placed with minNodes 3 runs on real nodes of a 4-node cluster;
 * kill -9 the leader (when it runs one of the runners; otherwise another runner's node). A new leader is elected,
 * declares the node gone, re-places the instance on the survivors (automatic re-placement, generation 2, still at
 * least 3 nodes), and the runners run there: the command really runs once per planned node, nowhere else, and every
 * node agrees on the state. A second kill leaves 2 nodes: minNodes cannot hold, so the instance fails with the reason
 * instead of shrinking. Multicast is blocked: the nodes find each other through `--no-mdns --peers` (each knows one
 * other; gossip does the rest).
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason } from './lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const FAILURE_TIMEOUT_MS = 3000;

interface Instance {
  id: string;
  nodes: string[];
  status: string;
  generation?: number;
  runners: { node: string; status: string }[];
}

const HOSTS = [0, 1, 2, 3];

t.test(
  'kill -9 the leader under a running instance: new leader, re-placed on the survivors (minNodes kept), runners running',
  { timeout: 240_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: HOSTS.length }, async (lab) => {
      // No multicast on this LAN: static peers only (given as API addresses; the cluster port is one above).
      for (const h of HOSTS) await lab.blockMulticast(h);
      const peerOf = (h: number) => `${lab.hosts[h === 0 ? 1 : 0]!.lanIp}:52515`;
      const c = await E2eCluster.start(t, lab, {
        failureTimeoutMs: FAILURE_TIMEOUT_MS,
        nodeArgs: (h) => ['--allow-exec', '--no-mdns', '--peers', peerOf(h), '--iface-type', 'lan0=ethernet'],
      });
      const vs = await c.converged(120_000, (v) => v.every((x) => x.topology.links.length === 12));
      const leaderHost = vs.find((v) => v.node.role === 'leader')!.host;
      const follower = c.nodes.find((n) => n.host !== leaderHost)!;

      const res = await follower.fetch(`/v1/instances`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          workload: { id: 'sleeper', memoryBytes: 64 << 20, layers: 3, kind: 'exec', command: 'sleep', args: ['120'] },
          minNodes: 3,
          instanceId: 'job-1',
        }),
      });
      t.equal(res.status, 201, 'placed through a follower (forwarded to the leader)');
      const inst = (await res.json()) as Instance;
      t.ok(inst.nodes.length >= 3, `on ${inst.nodes.length} nodes (minNodes 3)`);
      const placedFirst = new Set(inst.nodes);
      const sleeps = async (h: number) =>
        (
          await lab.exec(
            h,
            `for p in $(ip netns pids ${lab.hosts[h]!.ns}); do tr '\\0' ' ' < /proc/$p/cmdline 2>/dev/null; echo; done`,
          )
        ).stdout
          .split('\n')
          .filter((l) => /^sleep 120\b/.test(l)).length;
      await c.until(
        '3 runners Running',
        async () => {
          const all = await Promise.all(c.live().map((n) => n.tryGet<Instance>('/v1/instances/job-1')));
          return all.every(
            (i) => i && i.runners.length === inst.nodes.length && i.runners.every((r) => r.status === 'Running'),
          );
        },
        30_000,
        500,
      );
      t.same(
        await Promise.all(HOSTS.map(sleeps)),
        HOSTS.map((h) => (placedFirst.has(c.nodes[h]!.id) ? 1 : 0)),
        'one sleep per placed namespace',
      );

      // The leader when it runs a runner (the usual case), else a node that does: the instance must lose a node.
      const victimHost = placedFirst.has(c.nodes[leaderHost]!.id)
        ? leaderHost
        : c.nodes.find((n) => placedFirst.has(n.id))!.host;
      const leaderId = c.nodes[victimHost]!.id;
      if (victimHost !== leaderHost)
        t.comment('the leader runs no runner of this placement: killing a runner node instead');
      c.nodes[victimHost]!.kill('SIGKILL');
      const killedAt = Date.now();
      const after = await c.converged(FAILURE_TIMEOUT_MS + 20_000, (v) =>
        v.every((x) => !Object.keys(x.state.state.nodes).includes(leaderId)),
      );
      const failoverMs = Date.now() - killedAt;
      t.ok(
        after.every((v) => v.node.leaderId !== leaderId),
        `leader ${after[0]!.node.leaderId} ${failoverMs} ms after kill -9`,
      );

      const survivors = c.live().map((n) => n.id);
      const replaced = await c
        .until(
          'instance re-placed on the survivors, runners Running',
          async () => {
            const all = await Promise.all(c.live().map((n) => n.tryGet<Instance>('/v1/instances/job-1')));
            return (
              all.every(
                (i) =>
                  i &&
                  i.status === 'active' &&
                  !i.nodes.includes(leaderId) &&
                  i.runners.length === i.nodes.length &&
                  i.runners.every((r) => r.status === 'Running'),
              ) && (all as Instance[])
            );
          },
          30_000,
          500,
        )
        .catch(async (e: Error) => {
          t.fail(
            `${e.message}: ${JSON.stringify(await Promise.all(c.live().map((n) => n.tryGet('/v1/instances/job-1'))))}`,
          );
          return null;
        });
      if (!replaced) return;
      const replacedMs = Date.now() - killedAt;
      const now = replaced[0]!;
      t.ok(
        now.nodes.every((n) => survivors.includes(n)),
        `re-placed on ${now.nodes.join(', ')} ${replacedMs} ms after kill -9`,
      );
      t.ok(now.nodes.length >= 3, 'still at least minNodes');
      t.equal(now.generation, 2, 'generation 2');
      const planned = new Set(now.nodes);
      await c
        .until(
          'sleep runs exactly on the planned survivors',
          async () => {
            const counts = await Promise.all(c.live().map(async (n) => [n.id, await sleeps(n.host)] as const));
            return counts.every(([id, k]) => k === (planned.has(id) ? 1 : 0));
          },
          15_000,
          500,
        )
        .then(
          () => t.pass('the command runs once per planned node, nowhere else'),
          (e: Error) => t.fail(e.message),
        );
      const final = await c.converged(10_000);
      t.equal(new Set(final.map((v) => v.state.digest)).size, 1, 'digests equal');
      t.comment(`timings: failover + NodeGone ${failoverMs} ms, re-placed and Running ${replacedMs} ms after kill -9`);

      // Graceful stop: SIGTERM a node that runs a runner; it exits 0 and its runner's command stops with it.
      const victim = c.live().find((n) => planned.has(n.id))!;
      const stopAt = Date.now();
      await victim.stop('SIGTERM', 15_000);
      t.same(victim.exit, { code: 0, signal: null }, `SIGTERM: exit 0 in ${Date.now() - stopAt} ms`);
      t.equal(await sleeps(victim.host), 0, 'no runner command left behind in its namespace');

      // Two nodes left: minNodes 3 cannot hold. The instance fails with the planner's reason; it is not shrunk.
      const failed = await c
        .until(
          'instance failed: fewer nodes than minNodes',
          async () => {
            const all = await Promise.all(
              c.live().map((n) => n.tryGet<Instance & { reason?: string }>('/v1/instances/job-1')),
            );
            return all.every((i) => i && i.status === 'failed') && all[0];
          },
          30_000,
          500,
        )
        .catch((e: Error) => {
          t.fail(e.message);
          return null;
        });
      if (failed) t.match(failed.reason, /at least 3 nodes/, `reason: ${failed.reason}`);
    });
  },
);
