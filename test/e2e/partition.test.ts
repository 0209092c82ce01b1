/**
 * End to end, real processes: a network partition and its heal, twice: a follower, then the leader, is cut off
 * the LAN (a silent black hole). The other two (2 of the 3 members, a quorum) declare it gone and carry on (after
 * electing a new leader when the leader was cut); the cut node, alone (1 of 3, no quorum), has no
 * leader, keeps serving its last state read-only and refuses writes with TORUS_NO_QUORUM. When the cable is back
 * the two sides merge into one cluster again: one leader, one digest, every node and every link (both
 * directions, measured), and the work the majority did during the partition is kept (docs/cluster.md, Quorum).
 */
import t from 'tap';
import { Lab, withLab } from '../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason, type NodeView } from './lab-cluster.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const FAILURE_TIMEOUT_MS = 3000;
// Two labs one after the other (a follower cut, then the leader): more than tap's default 180 s per file.
t.setTimeout(360_000);

/** Which node is cut off: a follower (h2, or h1 when h2 leads), or the leader itself. */
type Cut = 'a follower' | 'the leader';

for (const which of ['a follower', 'the leader'] as Cut[]) {
  t.test(
    `partition ${which} off the LAN, then heal: the cluster merges back with every link`,
    { timeout: 170_000, skip: skipOrFail(why) },
    async (t) => {
      await withLab(t, { hosts: 3 }, async (lab) => {
        const c = await E2eCluster.start(t, lab, {
          failureTimeoutMs: FAILURE_TIMEOUT_MS,
          nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet'],
        });
        const full = (vs: NodeView[]) =>
          vs.every(
            (v) => v.topology.links.length === 6 && v.topology.links.every((l) => typeof l.bandwidthBps === 'number'),
          );
        const formed = await c.converged(90_000, full);
        const leaderHost = formed.find((v) => v.node.role === 'leader')!.host;
        const cutHost = which === 'the leader' ? leaderHost : leaderHost === 2 ? 1 : 2;
        const n2 = c.nodes[cutHost]!;
        const [n0, n1] = c.nodes.filter((n) => n !== n2) as [(typeof c.nodes)[0], (typeof c.nodes)[0]];
        const h2 = `h${cutHost}`;
        t.pass(`3 nodes, 6 measured links; cutting ${h2} (${which})`);

        await lab.cut(cutHost, 'lan');
        const cutAt = Date.now();
        // Writes sent to the cut-off node right after the cut (when it is the leader it still believes it leads until its
        // peers time out): none may be acknowledged, since no quorum can hold them. Was a known bug: the cut-off leader
        // answered 201 and those instances were gone after the heal.
        const cutWrites = Promise.all(
          [0, 1, 2, 3, 4].map(async (k) => {
            const id = `sent-to-the-cut-node-${k}`;
            const res = await n2
              .fetch('/v1/instances', {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                signal: AbortSignal.timeout(25_000),
                body: JSON.stringify({
                  workload: { id: `cut${k}`, memoryBytes: 1 << 20, layers: 2, kind: 'ring' },
                  instanceId: id,
                }),
              })
              .catch((e: Error) => ({ status: `no answer (${e.name})`, json: async () => ({}) }));
            return { id, status: res.status };
          }),
        );
        const majority = await c.converged(
          FAILURE_TIMEOUT_MS + 20_000,
          (vs) => vs.every((v) => v.topology.links.length === 2),
          () => [n0, n1],
        );
        const splitMs = Date.now() - cutAt;
        t.ok(
          majority.every((v) => !Object.keys(v.state.state.nodes).includes(n2.id)),
          `h${n0.host} and h${n1.host} declared ${h2} gone and agree (${splitMs} ms after the cut)`,
        );
        const alone = await c
          .until(
            `${h2} on its own, without a leader`,
            async () => {
              const [v] = (await c.views([n2])) ?? [];
              return v && v.node.role !== 'leader' && !v.node.leaderId && v;
            },
            FAILURE_TIMEOUT_MS + 20_000,
            400,
          )
          .catch(async (e: Error) => {
            t.fail(
              `${e.message}: ${JSON.stringify((await c.views([n2]))?.map((v) => ({ role: v.node.role, leader: v.node.leaderId, nodes: Object.keys(v.state.state.nodes).length, links: v.topology.links.length })))}`,
            );
            return null;
          });
        if (alone) {
          t.equal(
            Object.keys(alone.state.state.nodes).length,
            3,
            `${h2} alone (role ${alone.node.role}, no leader) still serves its last state: all 3 members, nobody declared gone`,
          );
          // A write on the minority side is refused at once with the reason, instead of being sequenced by a lone leader.
          const refused = await n2.fetch(`/v1/instances`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              workload: { id: 'alone', memoryBytes: 1 << 20, layers: 2, kind: 'exec', command: 'sleep', args: ['300'] },
              instanceId: 'made-by-the-minority',
            }),
          });
          const body = (await refused.json()) as { error?: { code?: string; message?: string } };
          t.equal(refused.status, 503, `a write on ${h2} is refused: ${body.error?.message}`);
          t.equal(body.error?.code, 'TORUS_NO_QUORUM', 'with TORUS_NO_QUORUM');
        }

        const cutResults = await cutWrites;
        // Refused (503: no quorum, or not committed) or never answered — never acknowledged, and never refused for a
        // reason that would make this check vacuous (a 401 would mean the write was not even tried).
        t.ok(
          cutResults.every((r) => r.status === 503 || typeof r.status === 'string'),
          `no write sent to the cut-off ${h2} is acknowledged: ${JSON.stringify(cutResults.map((r) => r.status))}`,
        );
        // Acknowledged writes through both majority nodes (ring workloads: no runner command) must all survive the heal.
        const acked: string[] = [];
        for (let k = 0; k < 6; k++) {
          const via = k % 2 === 0 ? n0 : n1;
          const id = `acked-during-partition-${k}`;
          const res = await via
            .fetch('/v1/instances', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              signal: AbortSignal.timeout(15_000),
              body: JSON.stringify({
                workload: { id: `ack${k}`, memoryBytes: 1 << 20, layers: 2, kind: 'ring' },
                instanceId: id,
              }),
            })
            .catch(() => null);
          if (res?.status === 201) acked.push(id);
        }
        t.ok(acked.length >= 4, `the majority acknowledges writes during the partition (${acked.length} of 6)`);

        // Work done by the majority during the partition must survive the merge.
        const created = await n0.fetch(`/v1/instances`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            workload: { id: 'during', memoryBytes: 1 << 20, layers: 2, kind: 'exec', command: 'sleep', args: ['300'] },
            instanceId: 'made-during-partition',
          }),
        });
        t.equal(created.status, 201, 'the majority places an instance during the partition');

        const majorityIndex = (await n0.get<{ lastIndex: number }>('/v1/state')).lastIndex;
        const aloneIndex = (await n2.get<{ lastIndex: number }>('/v1/state')).lastIndex;
        await lab.restore(cutHost, 'lan');
        const healAt = Date.now();
        // Every link back; not necessarily re-measured: instances run on every node now, and the profiler defers
        // capacity probes of links whose nodes run an instance (docs/profiler.md, measurement policy).
        const merged = await c
          .converged(60_000, (vs) => vs.every((v) => v.topology.links.length === 6))
          .catch(async (e: Error) => {
            const vs = await c.views();
            t.fail(
              `${e.message}: ${JSON.stringify(vs?.map((v) => ({ h: v.host, role: v.node.role, leader: v.node.leaderId?.slice(0, 8), nodes: Object.keys(v.state.state.nodes).length, links: v.topology.links.length, digest: v.state.digest.slice(0, 8) })))}`,
            );
            return null;
          });
        if (!merged) return;
        const healMs = Date.now() - healAt;
        t.equal(merged.filter((v) => v.node.role === 'leader').length, 1, 'one leader after the heal');
        t.equal(new Set(merged.map((v) => v.state.digest)).size, 1, 'one digest');
        t.pass(`merged back with all 6 links ${healMs} ms after the heal`);
        const kept = merged.map((v) =>
          Object.keys((v.state.state as unknown as { instances: Record<string, unknown> }).instances),
        );
        // Was a known bug: the isolated node elected itself in a newer term, so on the merge its log outranked the
        // majority's and everything the majority sequenced during the partition was dropped. Now it cannot start a
        // term without a quorum, so it follows the majority's leader and catches up.
        t.same(
          kept.map((ids) => ids.filter((id) => id === 'made-during-partition')),
          [0, 1, 2].map(() => ['made-during-partition']),
          'the instance the majority created during the partition is still there on every node',
        );
        for (const [i, ids] of kept.entries()) {
          t.same(
            acked.filter((id) => !ids.includes(id)),
            [],
            `every acknowledged write is on ${merged[i]!.host === undefined ? i : `h${merged[i]!.host}`} after the heal`,
          );
          t.same(
            ids.filter((id) => id.startsWith('sent-to-the-cut-node')),
            [],
            'none of the unacknowledged writes to the cut node came back',
          );
        }
        t.ok(
          merged.every((v) => v.state.lastIndex > majorityIndex),
          `the merged log continues the majority's (index ${majorityIndex} → ${merged[0]!.state.lastIndex})`,
        );
        // Whatever the state says, no runner may outlive its instance (or be missing from a live one). (Was a todo: the
        // state a merge installed had a lower lastIndex than the log the supervisor had seen, so the orphan runner kept
        // running; fixed in the runner supervisor, and the merge no longer replaces the majority's state.)
        const planned = new Map<string, number>();
        for (const [id, inst] of Object.entries(
          (merged[0]!.state.state as unknown as { instances: Record<string, { plan: { nodes: string[] } }> }).instances,
        ))
          planned.set(id, inst.plan.nodes.length);
        const sleeps = async (h: number) =>
          (
            await lab.exec(
              h,
              `for p in $(ip netns pids ${lab.hosts[h]!.ns}); do tr '\\0' ' ' < /proc/$p/cmdline 2>/dev/null; echo; done`,
            )
          ).stdout
            .split('\n')
            .filter((l) => /^sleep 300\b/.test(l)).length;
        const want = planned.get('made-during-partition') ?? 0; // the ring instances run no command
        await c
          .until(
            `${want} runner command(s) in the lab, as the state says`,
            async () => (await Promise.all([0, 1, 2].map(sleeps))).reduce((a, b) => a + b, 0) === want,
            30_000,
            500,
          )
          .then(
            () => t.pass(`runner processes match the state (${want})`),
            async (e: Error) =>
              t.fail(
                `${e.message}; per host now: ${JSON.stringify(await Promise.all([0, 1, 2].map(sleeps)))}; instances per node: ${JSON.stringify(await Promise.all(c.nodes.map(async (n) => (await n.get<{ instances: { id: string }[] }>('/v1/instances')).instances.map((i) => i.id))))}`,
              ),
          );
        t.comment(
          `log indices: majority ${majorityIndex}, lone node ${aloneIndex} before the heal; merged ${merged[0]!.state.lastIndex} after`,
        );
        t.comment(
          `timings: split detected ${splitMs} ms after the cut; merged with every link ${healMs} ms after the heal`,
        );
      });
    },
  );
}
