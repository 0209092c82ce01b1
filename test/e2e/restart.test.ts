/**
 * End to end, real processes: a node restarted with its data dir (same id, next incarnation) gets all its links
 * back, in both directions and measured — both after a quick restart (kill -9 and start again before the failure
 * timeout: no NodeGone, the new incarnation's NodeJoined drops its old links) and after a slow one (declared
 * gone first). test/actors/cluster/real-node-lab.test.ts covers leader failover with dist/main.js; this one is about what
 * the other actors (profiler, keeper) make of a restart.
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason, type NodeView } from './lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const FAILURE_TIMEOUT_MS = 3000;

t.test(
  'restarted node: same id, next incarnation, every link back and measured',
  { timeout: 170_000, skip: skipOrFail(why) },
  async (t) => {
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, {
        failureTimeoutMs: FAILURE_TIMEOUT_MS,
        nodeArgs: () => ['--iface-type', 'lan0=ethernet'],
      });
      const complete = (inc: number) => (vs: NodeView[]) =>
        vs.every((v) => {
          const nodes = v.state.state.nodes as Record<string, { incarnation: number }>;
          return (
            nodes[c.nodes[2]!.id]?.incarnation === inc &&
            v.topology.links.length === 6 &&
            v.topology.links.every((l) => typeof l.bandwidthBps === 'number' && l.type === 'ethernet')
          );
        });
      await c.converged(90_000, complete(1));
      const id2 = c.nodes[2]!.id;
      t.pass('3 nodes, 6 measured links');

      // Quick restart: kill -9 and start again at once (well within the failure timeout).
      c.nodes[2]!.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 300));
      c.startNode(2);
      const quick = Date.now();
      const vs = await c.converged(60_000, complete(2)).catch((e: Error) => e);
      if (vs instanceof Error) {
        const now = await c.views();
        t.fail(
          `after a quick restart: ${vs.message}; links now: ${JSON.stringify(now?.map((v) => ({ host: v.host, links: v.topology.links.map((l) => `${l.source.slice(0, 6)}>${l.sink.slice(0, 6)}@${l.ip}:${l.bandwidthBps ? 'm' : '-'}`) })))}`,
        );
        return;
      }
      t.equal(vs[2]!.node.id, id2, 'same id after restart');
      t.equal(vs[2]!.node.incarnation, 2, 'next incarnation');
      const quickMs = Date.now() - quick;
      t.pass(`quick restart: all 6 links back and measured, digests equal, ${quickMs} ms after the new start`);

      // Slow restart: killed, declared gone (links to and from it removed), then started again.
      c.nodes[2]!.kill('SIGKILL');
      await c.converged(FAILURE_TIMEOUT_MS + 15_000, (v) => v.every((x) => x.topology.links.length === 2));
      t.pass('killed node declared gone, its links removed');
      c.startNode(2);
      const slow = Date.now();
      const back = await c.converged(60_000, complete(3)).catch((e: Error) => e);
      if (back instanceof Error) {
        const now = await c.views();
        t.fail(
          `after a slow restart: ${back.message}; links now: ${JSON.stringify(now?.map((v) => v.topology.links.length))}`,
        );
        return;
      }
      t.pass(`slow restart: all 6 links back and measured ${Date.now() - slow} ms after the new start`);
      t.comment(`timings: quick restart ${quickMs} ms, slow restart ${Date.now() - slow} ms to full links`);
    });
  },
);
