/**
 * The runner hook between real nodes: an artifact added on one of 3 lab hosts, an exec instance on
 * all three whose workload lists it. The two nodes without it fetch it as a chain along the ring order; each runner
 * starts only once its node holds the artifact complete (the command checks the store's record itself) and its
 * command reads bit-identical bytes through TORUS_ARTIFACT_<NAME>; the instance view and `instances` show it.
 */
import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Lab, withLab } from '../../src/lab/index.js';
import { E2eCluster, e2eUnavailableReason, type E2eNode } from '../e2e/lab-cluster.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

// A multi-node lab on a shared 2-core machine (forming the cluster alone took 70 s at load 20): more than the
// default per-file timeout, so a slow CI machine does not cut a healthy run; each wait inside stays bounded.
t.setTimeout(360_000);

const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const MiB = 1024 * 1024;

interface InstanceView {
  nodes: string[];
  runners: { node: string; status: string; reason?: string }[];
  artifacts?: {
    id: string;
    name: string;
    bytes: number;
    nodes: { node: string; haveBytes: number; complete: boolean; rateBps?: number }[];
  }[];
}
interface Transfer {
  id: string;
  state: string;
  upstream?: string;
}

t.test(
  "3 lab hosts: runners start only once their node holds the workload's artifact, and see it bit-identical",
  { timeout: 340_000, skip: skipOrFail(why) },
  async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'torus-art-runner-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    await withLab(t, { hosts: 3, lanRate: '200mbit' }, async (lab) => {
      const c = await E2eCluster.start(t, lab, { nodeArgs: () => ['--allow-exec', '--iface-type', 'lan0=ethernet'] });
      await c.converged(120_000, profiled);
      const [h0] = c.nodes as [E2eNode, E2eNode, E2eNode];
      const src = join(c.tmpDir, 'weights');
      mkdirSync(src);
      const bytes = randomBytes(24 * MiB + 123);
      writeFileSync(join(src, 'file'), bytes);
      const add = await c.cli(
        0,
        ['artifacts', 'add', src, '--name', 'weights', '--chunk-size', '1MiB', '--data-dir', h0.dataDir],
        60_000,
      );
      t.equal(add.code, 0, `add: ${add.stderr}`);
      const id = add.stdout.trim();
      await c.until(
        'every node knows h0 holds it',
        async () =>
          (
            await Promise.all(
              c.nodes.map((n) => n.tryGet<{ holders: { node: string; complete: boolean }[] }>(`/v1/artifacts/${id}`)),
            )
          ).every((a) => a?.holders.some((h) => h.node === h0.id && h.complete)),
        60_000,
      );

      // Each rank records what it saw: the store's record of the artifact when it started, and the bytes' hash.
      const script =
        `d="$TORUS_ARTIFACT_WEIGHTS"; r=${out}/rank-$TORUS_RANK; ` +
        `{ echo "id=$TORUS_ARTIFACT_${id.slice(0, 12)}"; echo "dir=$d"; cat "$d/../info.json"; echo; ls "$d/.."; sha256sum "$d/file"; } > $r.tmp 2>&1; mv $r.tmp $r; exec sleep 300`;
      const res = await h0.fetch('/v1/instances', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          instanceId: 'art-1',
          minNodes: 3,
          workload: {
            kind: 'exec',
            id: 'art-job',
            memoryBytes: 64 * MiB,
            layers: 6,
            command: '/bin/sh',
            args: ['-c', script],
            artifacts: [id],
          },
        }),
      });
      t.equal(res.status, 201, `instance created: ${await res.clone().text()}`);
      const placed = (await res.json()) as InstanceView;
      t.equal(placed.nodes.length, 3, `placed on all three: ${placed.nodes.join(' → ')}`);

      // While it runs: progress in the instance view (bytes per node) — sampled, at least the final state is checked.
      let sawPartial = false;
      const done = await c.until(
        'every rank ran its command',
        async () => {
          const v = await h0.tryGet<InstanceView>('/v1/instances/art-1');
          if (v?.artifacts?.[0]?.nodes.some((n) => !n.complete && n.haveBytes > 0)) sawPartial = true;
          return [0, 1, 2].every((r) => existsSync(join(out, `rank-${r}`)));
        },
        120_000,
        200,
      );
      t.ok(done);
      t.comment(`a partial holding was seen in the instance view: ${sawPartial}`);
      const want = createHash('sha256').update(bytes).digest('hex');
      for (let r = 0; r < 3; r++) {
        const seen = readFileSync(join(out, `rank-${r}`), 'utf8');
        t.match(
          seen,
          new RegExp(`^${want}  .*/artifacts/${id}/files/file$`, 'm'),
          `rank ${r}: the bytes are identical (sha256)`,
        );
        t.match(seen, /"complete":true/, `rank ${r}: its node held the artifact complete when the runner started`);
        t.notMatch(seen, /verified\.log/, `rank ${r}: no transfer journal left (the transfer had ended)`);
        t.match(
          seen,
          new RegExp(`^id=.*/artifacts/${id}/files$`, 'm'),
          `rank ${r}: TORUS_ARTIFACT_<id12> names the same directory`,
        );
      }

      // The two receivers fetched along the ring order: each from the node before it (the holder heads the chain).
      const order = placed.nodes;
      const head = order.indexOf(h0.id);
      for (let k = 1; k < 3; k++) {
        const node = order[(head + k) % 3]!;
        const n = c.nodes.find((x) => x.id === node)!;
        const ts = (await n.get<{ transfers: Transfer[] }>('/v1/artifacts/transfers')).transfers.find(
          (x) => x.id === id,
        );
        t.match(
          ts,
          { state: 'complete', upstream: order[(head + k - 1) % 3] },
          `${node} fetched from the node before it in ring order`,
        );
      }
      const view = await c.until(
        'the view shows every node complete',
        async () => {
          const v = await h0.tryGet<InstanceView>('/v1/instances/art-1');
          return v?.artifacts?.[0]?.nodes.every((n) => n.complete) && v;
        },
        30_000,
      );
      t.match(view.artifacts![0], { id, name: 'weights', bytes: bytes.length });
      const cli = await c.cli(1, ['instances', 'art-1'], 30_000);
      t.match(
        cli.stdout,
        new RegExp(`artifact weights \\(${id.slice(0, 12)}, 24\\.0 MiB\\): .*held`),
        'instances shows the artifact per node',
      );
      const list = await c.cli(1, ['instances'], 30_000);
      t.match(list.stdout, /ARTIFACTS/);
      t.equal((await c.cli(0, ['delete', 'art-1'], 30_000)).code, 0);
    });
  },
);
