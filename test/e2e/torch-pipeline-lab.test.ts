/**
 * The torch pipeline job (benchmarks/model-placement/pipeline_job.py, Debian's python3-torch) under
 * `torus run --min-nodes 3 --layers 6` on a real 3-host lab cluster, the CLI inside host 0's namespace:
 * - each rank builds the layers the plan gave it (TORUS_LAYER_START/END = the plan's shards) of a 6-layer fixture
 *   model and prints a JSON line per step (a prefill and the decode steps), the last rank with the whole step time;
 * - the activations cross the planned addresses: the kernel's byte counts (TCP_INFO) of each rank's Gloo pair to the
 *   next rank, between the plan's mesh addresses of the two nodes, cover every hidden state the stage sent;
 * - a rank that fails (`--fail-rank 1 --fail-after 3`) stops the group: `run` exits with its code 3 naming rank 1,
 *   and no rank's process is left on any host.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { makeModel } from '../../benchmarks/model-fixture/make-model.js';
import { withLab } from '../../src/lab/index.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { E2eCluster } from './lab-cluster.js';
import { finished, procsWith, startRun } from './fixtures/run-cli.js';
import { why } from './fixtures/torch-lab.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

// Forming a 3-host cluster on a shared 2-core machine takes a minute or two; each wait inside is bounded.
t.setTimeout(360_000);

const JOB = fileURLToPath(new URL('../../benchmarks/model-placement/pipeline_job.py', import.meta.url));
const PROMPT = 16;
const DECODE = 6;

type Line = Record<string, any>;

/** Per rank, the JSON lines it printed (stdout lines prefixed `[rank N node]`), and the node name of each rank. */
function byRank(stdout: string): { lines: Line[][]; hosts: string[] } {
  const lines: Line[][] = [[], [], []];
  const hosts: string[] = [];
  for (const l of stdout.split('\n')) {
    const m = /^\[rank (\d+) (\S+)\] (\{.*\})$/.exec(l);
    if (!m) continue;
    const r = Number(m[1]);
    hosts[r] = m[2]!;
    lines[r]?.push(JSON.parse(m[3]!) as Line);
  }
  return { lines, hosts };
}

interface Plan {
  nodes: string[];
  shards: { node: string; rank: number; startLayer: number; endLayer: number }[];
  meshAddresses?: Record<string, string>;
}

t.test(
  "a torch pipeline under torus run on 3 lab hosts: the plan's layers, activations over the planned addresses, a failing rank stops the group",
  { timeout: 340_000, skip: skipOrFail(why) },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'torus-pipeline-lab-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const model = join(dir, 'model');
    const made = makeModel({ out: model, bytes: 32 * 2 ** 20, layers: 6, shards: 2 });
    await withLab(t, { hosts: 3 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, {
        nodeArgs: () => ['--allow-exec=python3', '--iface-type', 'lan0=ethernet'],
      });
      await c.converged(100_000, profiled);
      const job = ['/usr/bin/python3', JOB, '--model', model, '--prompt-tokens', String(PROMPT)];

      // 1. The job runs to the end on the plan's layers.
      const started = Date.now();
      const ok = startRun(c, 0, [
        '--min-nodes',
        '3',
        '--layers',
        '6',
        '--instance-id',
        'pipe',
        '--',
        ...job,
        '--decode-steps',
        String(DECODE),
      ]);
      t.same(await finished(ok, 120_000), { code: 0, signal: null }, `run exits 0 (${ok.out.stderr.slice(-600)})`);
      t.comment(`the job took ${Date.now() - started} ms under run`);
      const view = await c.nodes[0]!.tryGet<{ plan: Plan }>('/v1/instances/pipe');
      const plan = view?.plan;
      if (!plan) return t.fail('the instance view has the plan');
      const { lines, hosts } = byRank(ok.out.stdout);
      const nodeOf = (r: number) => c.nodes[Number(hosts[r]?.slice(1))]!.id;
      t.same([0, 1, 2].map(nodeOf), plan.nodes, `ranks on the plan's nodes in rank order (${hosts.join(', ')})`);
      const mesh = (r: number) => plan.meshAddresses?.[plan.nodes[r]!];
      for (let r = 0; r < 3; r++) {
        const stage = lines[r]!.find((l) => l.event === 'stage');
        const shard = plan.shards.find((s) => s.rank === r)!;
        t.match(
          stage,
          {
            layers: [shard.startLayer, shard.endLayer],
            source: 'TORUS_LAYER_START/END',
            iface: 'lan0',
            world: 3,
          },
          `rank ${r}: the plan's layers ${shard.startLayer}:${shard.endLayer}, Gloo on lan0`,
        );
        t.equal(mesh(r), lab.hosts[Number(hosts[r]!.slice(1))]!.lanIp, `rank ${r}: its planned address is its LAN's`);
        const steps = lines[r]!.filter((l) => l.event === 'step');
        t.same(
          steps.map((l) => [l.kind, l.step]),
          [['prefill', 0], ...Array.from({ length: DECODE }, (_, i) => ['decode', i + 1])],
          `rank ${r}: a JSON line per step`,
        );
        t.ok(
          steps.every((l) => l.computeMs > 0 && (r === 2 ? l.stepMs >= l.computeMs : l.stepMs === undefined)),
          `rank ${r}: its compute time${r === 2 ? ' and the whole step time' : ''} (${steps.map((l) => l.stepMs ?? l.computeMs).join(', ')} ms)`,
        );
      }
      // Each stage's hidden states (prefill + decode positions × hidden × 2 bytes) went to the next rank over the
      // Gloo pair between the two nodes' planned addresses; the last rank's tokens went back to rank 0.
      const activations = (PROMPT + DECODE) * made.hiddenSize * 2;
      for (let r = 0; r < 3; r++) {
        const next = (r + 1) % 3;
        const links = lines[r]!.find((l) => l.event === 'links')?.links as Line[] | undefined;
        const pair = links?.find(
          (l) => !l.store && l.local.startsWith(`${mesh(r)}:`) && l.remote.startsWith(`${mesh(next)}:`),
        );
        const least = r === 2 ? DECODE * 8 : activations;
        t.ok(
          pair && pair.sent >= least,
          `rank ${r} → rank ${next}: ${pair?.sent} bytes sent ${mesh(r)} → ${mesh(next)} (at least ${least}): ${JSON.stringify(links)}`,
        );
      }

      // 2. Rank 1 exits 3 after 3 steps: run exits 3 naming rank 1, every rank's process is gone.
      const bad = startRun(c, 0, [
        '--min-nodes',
        '3',
        '--layers',
        '6',
        '--instance-id',
        'pipe-fail',
        '--',
        ...job,
        '--decode-steps',
        '50',
        '--fail-rank',
        '1',
        '--fail-after',
        '3',
      ]);
      t.same(await finished(bad, 120_000), { code: 3, signal: null }, "run exits with the failing rank's code");
      t.match(bad.out.stderr, /job pipe-fail failed: rank 1 \(node \S+\) exited with code 3/, 'run names rank 1');
      t.match(bad.out.stderr, /failing on purpose after 3 steps/, "rank 1's own reason reaches the terminal");
      const failedLines = byRank(bad.out.stdout).lines;
      t.ok(
        failedLines[1]!.filter((l) => l.event === 'step').length === 3,
        'rank 1 printed its 3 steps before it failed',
      );
      t.notOk(
        failedLines.some((ls) => ls.some((l) => l.event === 'step' && l.step >= 50)),
        'no rank ran to the end',
      );
      await c.until(
        'every rank stopped',
        async () => (await procsWith(lab, '/usr/bin/python3')).every((n) => n === 0),
        20_000,
        250,
      );
    });
  },
);
