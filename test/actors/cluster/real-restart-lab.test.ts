/**
 * End to end, real processes (`node dist/main.js`, every actor): the whole cluster is stopped and started again
 * with the same data dirs. The replicated state was saved (src/actors/cluster/storage/state-store.ts), so the instance placed
 * before is still there afterwards, the log continues from where it was, and its runners run again. Before, the
 * cluster came back with an empty log. Needs `npm run build` and root for the lab.
 */
import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Lab, withLab } from '../../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason } from '../../e2e/lab-cluster.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const FAILURE_TIMEOUT_MS = 3000;

t.test(
  'whole-cluster restart: the saved state comes back on every node',
  { timeout: 200_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, {
        failureTimeoutMs: FAILURE_TIMEOUT_MS,
        nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet'],
      });
      // Placement needs the nodes' profiles: wait for every link measured, as a user would see a ready cluster.
      await c.converged(90_000, (vs) =>
        vs.every(
          (v) => v.topology.links.length === 6 && v.topology.links.every((l) => typeof l.bandwidthBps === 'number'),
        ),
      );
      const [n0] = c.nodes as [(typeof c.nodes)[0]];
      const created = await n0.fetch(`/v1/instances`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          workload: { id: 'kept', memoryBytes: 1 << 20, layers: 2, kind: 'exec', command: 'sleep', args: ['300'] },
          instanceId: 'made-before-restart',
        }),
      });
      t.equal(created.status, 201, `an instance placed: ${created.status === 201 ? 'ok' : await created.text()}`);
      const instances = (v: { state: { state: unknown } }) =>
        Object.keys((v.state.state as { instances: Record<string, unknown> }).instances);
      const before = await c.converged(30_000, (vs) => vs.every((v) => instances(v).includes('made-before-restart')));
      const beforeIndex = before[0]!.state.lastIndex;
      // The durable log (fsynced before an entry is acknowledged) is the saved state while running; snapshots come every
      // 1000 entries, on a snapshot install and on stop (docs/cluster.md, Saved state).
      t.ok(
        c.nodes.every((n) => existsSync(join(n.dataDir, 'cluster-state', 'log.jsonl'))),
        'each node saved its state (its log) in its data dir',
      );

      // A node installs its signal handlers once start-up is over (it prints its start line then); a SIGTERM before
      // that ends it by the default action, without the orderly shutdown.
      await c.until('every node printed its start line', async () => c.nodes.every((n) => n.printedAt > 0), 30_000);
      // Generous: an orderly stop ends the runner (SIGTERM, grace) and flushes state; a loaded machine stretches both.
      await Promise.all(c.nodes.map((n) => n.stop('SIGTERM', 20_000)));
      t.ok(
        c.nodes.every((n) => n.exit?.code === 0),
        `all stopped cleanly: ${JSON.stringify(c.nodes.map((n) => n.exit))}`,
      );
      t.ok(
        c.nodes.every((n) => existsSync(join(n.dataDir, 'cluster-state', 'log.jsonl'))),
        'snapshot and log files left behind',
      );

      for (const n of c.nodes) c.startNode(n.host);
      const startedAt = Date.now();
      const after = await c
        .converged(90_000, (vs) => vs.every((v) => v.node.incarnation === 2 && v.state.lastIndex > beforeIndex))
        .catch(async (e: Error) => {
          const vs = await c.views();
          t.fail(
            `${e.message}: ${JSON.stringify(vs?.map((v) => ({ h: v.host, role: v.node.role, inc: v.node.incarnation, index: v.state.lastIndex, nodes: Object.keys(v.state.state.nodes).length, inst: instances(v) })))}`,
          );
          return null;
        });
      if (!after) return;
      t.pass(`one cluster again ${Date.now() - startedAt} ms after the restart`);
      t.same(
        after.map(instances),
        [0, 1, 2].map(() => ['made-before-restart']),
        'the instance placed before the restart is on every node',
      );
      t.ok(
        after.every((v) => v.state.lastIndex > beforeIndex),
        `the log continues (index ${beforeIndex} → ${after[0]!.state.lastIndex}), it did not start empty`,
      );
      // Its runners run again: one `sleep 300` per planned node.
      const plan =
        (after[0]!.state.state as unknown as { instances: Record<string, { plan: { nodes: string[] } }> }).instances[
          'made-before-restart'
        ]?.plan.nodes.length ?? 1;
      const sleeps = async (h: number) =>
        (
          await lab.exec(
            h,
            `for p in $(ip netns pids ${lab.hosts[h]!.ns}); do tr '\\0' ' ' < /proc/$p/cmdline 2>/dev/null; echo; done`,
          )
        ).stdout
          .split('\n')
          .filter((l) => /^sleep 300\b/.test(l)).length;
      await c
        .until(
          `${plan} runner command(s) running again`,
          async () => (await Promise.all([0, 1, 2].map(sleeps))).reduce((a, b) => a + b, 0) === plan,
          45_000,
          500,
        )
        .then(
          () => t.pass(`runners running again (${plan})`),
          (e: Error) => t.fail(e.message),
        );
    });
  },
);
