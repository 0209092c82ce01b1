/**
 * Heal at model scale, real nodes on a lab LAN: a model added on one of 4 hosts, an exec instance of 3 pipeline
 * stages naming it, the fourth host spare. kill -9 of a stage's node (not the one holding the model, not the
 * leader): every survivor keeps its stage (same layers, its store and received bytes unchanged: nothing
 * re-fetched), the spare takes exactly the lost layers in the lost node's position and fetches at most its stage
 * + 1 %, every runner of the new placement starts with a TORUS_MODEL_DIR holding exactly its tensors, and the
 * instance's reason says the stages were kept; `torus instances` shows each node's layers.
 */
import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Lab, withLab } from '../../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason } from '../../e2e/lab-cluster.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import { stageTensors } from '../../../src/artifacts/model/shard-writer.js';
import { chunksBytes, stageChunks } from '../../../src/artifacts/model/stage-chunks.js';
import { decodeManifest } from '../../../src/artifacts/manifest.js';
import type { ModelRecord } from '../../../src/protocols/model-record.js';

t.setTimeout(480_000);
const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const READER = fileURLToPath(new URL('./fixtures/read_shard.py', import.meta.url));
const MiB = 1024 * 1024;
const HOSTS = [0, 1, 2, 3];
/**
 * Unequal memory offered to placements (`--memory-limit`): the split follows memory, so a fresh plan over the nodes
 * left after the kill would split differently and move the survivors; a kept split does not.
 */
const LIMITS = ['160MiB', '120MiB', '80MiB', '60MiB'];

interface Shard {
  node: string;
  startLayer: number;
  endLayer: number;
}
interface Instance {
  nodes: string[];
  generation?: number;
  reason?: string;
  plan: { shards: Shard[] };
  runners: { node: string; status: string }[];
}

t.test(
  'kill -9 of a stage node: the re-placed stages fetch only what they lack, every runner gets its TORUS_MODEL_DIR',
  { timeout: 460_000, skip: skipOrFail(why) },
  async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'torus-model-heal-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    await withLab(t, { hosts: HOSTS.length, lanRate: '400mbit' }, async (lab) => {
      for (const h of HOSTS) await lab.blockMulticast(h);
      const peerOf = (h: number) => `${lab.hosts[h === 0 ? 1 : 0]!.lanIp}:52515`;
      const c = await E2eCluster.start(t, lab, {
        failureTimeoutMs: 3000,
        nodeArgs: (h) => [
          '--allow-exec',
          '--no-mdns',
          '--peers',
          peerOf(h),
          '--iface-type',
          'lan0=ethernet',
          '--memory-limit',
          LIMITS[h]!,
        ],
      });
      const vs = await c.converged(180_000, (v) => v.every((x) => x.topology.links.length === 12));
      const leaderHost = vs.find((v) => v.node.role === 'leader')!.host;
      const holder = c.nodes[leaderHost === 0 ? 1 : 0]!;
      const src = join(c.tmpDir, 'tiny-llama');
      makeModel({ out: src, bytes: 96 * MiB, layers: 6, shards: 3, seed: 'lab-heal' });
      const add = await c.cli(
        holder.host,
        ['artifacts', 'add', src, '--name', 'tiny-llama', '--data-dir', holder.dataDir],
        120_000,
      );
      t.equal(add.code, 0, `add: ${add.stderr}`);
      const id = add.stdout.trim();
      const manifest = decodeManifest(readFileSync(join(holder.dataDir, 'artifacts', id, 'manifest.json')), id);
      const model = JSON.parse(
        readFileSync(join(holder.dataDir, 'artifacts', id, 'model.json'), 'utf8'),
      ) as ModelRecord;

      // Each run leaves <node>-<from>-<to>-<ns>.json: what the reader found in its TORUS_MODEL_DIR.
      const script =
        `f=${out}/$TORUS_NODE_ID-$TORUS_LAYER_START-$TORUS_LAYER_END-$(date +%s%N); ` +
        `python3 ${READER} "$TORUS_MODEL_DIR" > $f.tmp 2>&1; mv $f.tmp $f.json; exec sleep 300`;
      const runs = (s: Shard, after = 0): string[] =>
        readdirSync(out).filter((f) => {
          const m = /^(.+)-(\d+)-(\d+)-(\d+)\.json$/.exec(f);
          return (
            !!m &&
            m[1] === s.node &&
            Number(m[2]) === s.startLayer &&
            Number(m[3]) === s.endLayer &&
            Number(m[4]) / 1e6 > after
          );
        });
      const res = await holder.fetch('/v1/instances', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          instanceId: 'heal',
          minNodes: 3,
          workload: {
            kind: 'exec',
            id: 'heal-job',
            model: id,
            memoryBytes: 96 * MiB,
            layers: 6,
            command: '/bin/sh',
            args: ['-c', script],
          },
        }),
      });
      t.equal(res.status, 201, res.status === 201 ? 'instance created' : await res.clone().text());
      const first = (await res.json()) as Instance;
      const stagesOf = (i: Instance) => i.plan.shards.filter((s) => s.endLayer > s.startLayer);
      await c.until(
        'every first-placement runner read its shard',
        async () => stagesOf(first).every((s) => runs(s).length > 0),
        240_000,
        500,
      );

      // A stage node that neither holds the model nor leads.
      const victim = c.nodes.find((n) => n.host !== leaderHost && n.id !== holder.id && first.nodes.includes(n.id));
      if (!victim) throw new Error(`no stage node to kill in ${first.nodes.join(', ')}`);
      const held = new Map<string, Set<number>>(); // the chunks of each node's first stage
      for (const s of stagesOf(first))
        held.set(s.node, new Set(stageChunks(manifest, model, { fromLayer: s.startLayer, toLayer: s.endLayer })));
      // What each survivor had received before the kill (its transfers of this model, summed).
      const received = async (node: (typeof c.nodes)[number]): Promise<number> => {
        const list = await node.tryGet<{ transfers: { id: string; haveBytes?: number; bytes?: number }[] }>(
          '/v1/artifacts/transfers',
        );
        return (list?.transfers ?? []).filter((x) => x.id === id).reduce((a, x) => a + (x.haveBytes ?? 0), 0);
      };
      const survivors = c.nodes.filter((n) => n !== victim && n.id !== holder.id && first.nodes.includes(n.id));
      const before = new Map<string, number>();
      for (const n of survivors) before.set(n.id, await received(n));
      const lost = stagesOf(first).find((s) => s.node === victim.id)!;
      const killedAt = Date.now();
      victim.kill('SIGKILL');
      const second = await c.until(
        're-placed without the killed node, every runner Running',
        async () => {
          const i = await holder.tryGet<Instance>('/v1/instances/heal');
          return (
            !!i &&
            (i.generation ?? 1) > 1 &&
            !i.nodes.includes(victim.id) &&
            i.runners.length > 0 &&
            i.runners.every((r) => r.status === 'Running') &&
            i
          );
        },
        240_000,
        1000,
      );
      t.comment(`re-placed: ${JSON.stringify(stagesOf(second).map((s) => [s.node, s.startLayer, s.endLayer]))}`);
      t.match(second.reason ?? '', /^kept the stages of /, `the reason says the stages were kept: ${second.reason}`);
      t.same(
        second.plan.shards.map((s) => [s.startLayer, s.endLayer]),
        first.plan.shards.map((s) => [s.startLayer, s.endLayer]),
        'the same layer ranges in the same order',
      );
      t.same(
        second.plan.shards.map((s) => (s.node === victim.id ? null : s.node)).filter((n) => first.nodes.includes(n!)),
        first.plan.shards.map((s) => s.node).filter((n) => n !== victim.id),
        'every survivor in its position',
      );
      const spare = second.plan.shards.find((s) => !first.nodes.includes(s.node));
      t.same(
        spare && [spare.startLayer, spare.endLayer],
        [lost.startLayer, lost.endLayer],
        'the spare took the lost layers',
      );
      for (const n of survivors)
        t.equal(await received(n), before.get(n.id), `${n.id} received nothing after the kill (transfers)`);
      for (const s of stagesOf(second)) {
        const stage = { fromLayer: s.startLayer, toLayer: s.endLayer };
        const file = await c.until(
          `${s.node}'s new runner read its shard`,
          async () => runs(s, killedAt)[0],
          120_000,
          500,
        );
        const read = JSON.parse(readFileSync(join(out, file), 'utf8')) as Record<string, unknown>;
        t.same(Object.keys(read).sort(), [...stageTensors(model, stage)].sort(), `${s.node}: exactly its tensors`);
        if (s.node === holder.id) continue;
        const had = held.get(s.node);
        const want = new Set([...(had ?? []), ...stageChunks(manifest, model, stage)]);
        const node = c.nodes.find((n) => n.id === s.node)!;
        // What the node stored: each chunk once, exactly the chunks of the stage it had and the one it has now.
        const bits = readFileSync(join(node.dataDir, 'artifacts', id, 'verified.log'));
        const journaled = Array.from({ length: bits.length / 4 }, (_, k) => bits.readUInt32LE(4 * k));
        t.equal(new Set(journaled).size, journaled.length, `${s.node}: no chunk stored twice`);
        t.same(
          [...new Set(journaled)].sort((a, b) => a - b),
          [...want].sort((a, b) => a - b),
          `${s.node}: it holds exactly the chunks of its stages (${had?.size ?? 0} before, ${want.size} now)`,
        );
        if (had) t.equal(want.size, had.size, `${s.node} kept its stage: no chunk added to its store`);
        if (!had) {
          const shard = stageTensors(model, stage).reduce((a, n) => {
            const x = model.tensors.find((y) => y[0] === n)!;
            return a + x[5] - x[4];
          }, 0);
          const got = chunksBytes(manifest, [...want]);
          t.ok(
            got <= shard * 1.01 + 4096,
            `${s.node} took over layers ${s.startLayer}-${s.endLayer}: ${got} bytes for a shard of ${shard}`,
          );
        }
      }
      const cli = await c.cli(holder.host, ['instances', 'heal'], 30_000);
      t.match(cli.stdout, /artifact tiny-llama .*held \(layers \d+-\d+\)/, `instances shows each node's layers`);
      t.comment(cli.stdout);
    });
  },
);
