/**
 * The pipeline benchmark end to end on a 3-node lab: a thunderbolt-style ring of 4 Gbit/s cables beside a
 * 200 Mbit/s LAN. POST /v1/bench/pipeline places the described workload on all three nodes, the runners run a
 * pipeline step through the stages in ring order, each activation crosses every hop at the planned (cable)
 * address and arrives bit for bit; the answer carries the measured step beside the prediction for the same plan.
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import type { PipelineBenchResult } from '../../src/bench/live/pipeline-bench-live.js';
import { E2eCluster, e2eUnavailableReason, type NodeView } from './lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();
t.setTimeout(420_000);

t.test(
  'pipeline bench on a 3-node lab: stages in ring order over the cables, activations verified, measured beside predicted',
  { timeout: 400_000, skip: skipOrFail(why) },
  async (t) => {
    const ring = [
      { a: 0, b: 1 },
      { a: 1, b: 2 },
      { a: 2, b: 0 },
    ].map((l) => ({ ...l, rate: '4gbit', label: 'thunderbolt' }));
    await withLab(t, { hosts: 3, lanRate: '200mbit', links: ring }, async (lab) => {
      const p2pOf = (h: number) =>
        [0, 1, 2].filter((o) => o !== h).flatMap((o) => ['--iface-type', `${lab.ifName(h, o)}=thunderbolt`]);
      const c = await E2eCluster.start(t, lab, {
        nodeArgs: (h) => ['--iface-type', 'lan0=ethernet', ...p2pOf(h)],
      });
      const ready = (vs: NodeView[]) =>
        vs.every(
          (v) =>
            v.topology.links.length === 12 &&
            v.topology.links.every((l) => typeof l.bandwidthBps === 'number') &&
            v.topology.nodes.every(
              (n) =>
                n.memory &&
                (n as { device?: { memoryBandwidthGBps?: number } }).device?.memoryBandwidthGBps !== undefined,
            ),
        );
      await c.converged(180_000, ready);
      const steps = 6,
        warmup = 2,
        hiddenSize = 4096;
      const res = await c.nodes[0]!.fetch('/v1/bench/pipeline', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          workload: { id: 'pipe', memoryBytes: 6 * 2 ** 22, layers: 6, hiddenSize, tokensPerStep: 4 },
          minNodes: 3,
          steps,
          warmup,
        }),
      });
      const r = (await res.json()) as PipelineBenchResult;
      t.equal(res.status, 200, JSON.stringify(r).slice(0, 400));
      t.equal(r.nodes.length, 3, 'three stages');
      t.same(r.layers, [2, 2, 2], 'layers split across the stages');
      const cableIps = new Set(
        c.nodes.flatMap((_, h) => [0, 1, 2].filter((o) => o !== h).map((o) => lab.linkIp(h, o))),
      );
      for (const [rank, ip] of r.nextHop.entries())
        t.ok(cableIps.has(ip), `rank ${rank} dials the next stage at a cable address (${ip})`);
      const activationBytes = hiddenSize * 2 * 4;
      t.equal(r.measured.activationBytes, activationBytes);
      t.equal(r.measured.verifiedBytes, (steps + warmup) * activationBytes, 'every step came back to rank 0');
      t.equal(r.measured.wrong, 0, 'bit for bit');
      t.ok((r.measured.stepMs ?? 0) > 0, 'measured step time');
      t.ok((r.predicted.stepMs ?? 0) > 0, `complete prediction (unmeasured: ${r.predicted.unmeasured.join(', ')})`);
      t.comment(`measured ${r.measured.stepMs} ms, predicted ${r.predicted.stepMs} ms, error ${r.errorPercent} %`);

      // One given option: the reverse ring order, pinned with `nodes`.
      const reversed = [...r.nodes].reverse();
      const post = (body: unknown) =>
        c.nodes[0]!.fetch('/v1/bench/pipeline', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const workload = { id: 'pipe', memoryBytes: 6 * 2 ** 22, layers: 6, hiddenSize, tokensPerStep: 4 };
      const pinnedRes = await post({ workload, nodes: reversed, steps: 2, warmup: 1 });
      const pinned = (await pinnedRes.json()) as PipelineBenchResult;
      t.equal(pinnedRes.status, 200, JSON.stringify(pinned).slice(0, 400));
      t.same(pinned.nodes, reversed, 'the pinned option runs in the given order');
      t.same(pinned.layers, [2, 2, 2]);
      t.equal(pinned.measured.wrong, 0, 'bit for bit');
      for (const [rank, ip] of pinned.nextHop.entries())
        t.ok(cableIps.has(ip), `pinned rank ${rank} dials the next stage at a cable address (${ip})`);
      const instanceIds = async () =>
        JSON.stringify(
          ((await (await c.nodes[0]!.fetch('/v1/instances')).json()) as { instances: { id: string }[] }).instances
            .map((i) => i.id)
            .sort(),
        );
      // A bench deletes its instance once it has measured; that delete may still be in flight here, and it must
      // not be taken for a change made by the bad request below.
      await c.until('the benches to have removed their instances', async () => (await instanceIds()) === '[]', 30_000);
      const instancesBefore = await instanceIds();
      const bad = await post({ workload, nodes: [reversed[0], 'no-such-node'] });
      const badBody = (await bad.json()) as { error: { code: string; details: { unknown: string[] } } };
      t.equal(bad.status, 404, 'an id the cluster does not have is a 404 (the state, not the shape)');
      t.equal(badBody.error.code, 'TORUS_NODE_UNKNOWN');
      t.same(badBody.error.details, { unknown: ['no-such-node'] }, 'naming the node');
      t.equal(await instanceIds(), instancesBefore, 'and changes nothing');
    });
  },
);
