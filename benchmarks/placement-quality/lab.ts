/**
 * Placement quality, measured: a 5-host namespace lab of real nodes. h0–h3 form a thunderbolt-style ring of
 * point-to-point links shaped to --rate (default 4gbit) beside a switched LAN at --lan-rate (1gbit); h4 is on
 * the LAN only, its port shaped to --far-rate (100mbit). Memory is declared unevenly with --memory-limit (h0–h3
 * 96 MiB, h4 192 MiB), so a 256 MiB workload fits on 2 nodes only with h4 and on 3 or more without it. Every
 * shaped link gets a small tbf bucket (docs/lab.md): with the default 1 MiB one, a message after a pause crosses
 * at line rate, and the first run measured h4's 100 Mbit/s hops 3× faster than their sustained rate.
 * This kernel has no netem, so the far host's path has no added delay (its RTT is what the shaping gives).
 * For every feasible option (lab-options.ts: node sets of every size × ring orders, the planner's addresses and
 * split) the `pipeline` workload runs through POST /v1/bench/pipeline with `nodes` pinning that option; the
 * measured step time is compared with the cost model's prediction for it. Then: the option the planner chose
 * (the same bench without `nodes`) against the best measured one, and against exo's rule (smallest feasible
 * set, addresses by interface label).
 *   node build/benchmarks/placement-quality/index.js --lab [--rounds N] [--steps N] [--json] [--quick]
 * Needs root (namespaces); says so and exits 0 otherwise. Targets are printed, not asserted.
 */
import { loadavg } from 'node:os';
import { BenchOwner, Lab, NodeCluster, nodeUnavailableReason, type NodeView } from '../../src/lab/index.js';
import type { PipelineBenchResult } from '../../src/bench/live/pipeline-bench-live.js';
import { args, flag } from '../args.js';
import { printTable, type BenchRow } from '../table.js';
import {
  cycleKey,
  exoRuleOption,
  feasibleOptions,
  measuredNextHops,
  placementStateFromTopology,
  type LabOption,
} from './lab-options.js';
import { remeasureDevices } from './lab-devices.js';
import { errorPercent, errorSplit, median, runConditions, summarize, type Measured } from './lab-stats.js';

const json = args.includes('--json');
const quick = args.includes('--quick');
const rounds = Number(flag('--rounds') ?? (quick ? 1 : 2));
const steps = Number(flag('--steps') ?? (quick ? 4 : 8));
const ringRate = flag('--rate') ?? '4gbit';
const lanRate = flag('--lan-rate') ?? '1gbit';
const farRate = flag('--far-rate') ?? '100mbit';
const HOSTS = 5;
const FAR = 4;
const MiB = 2 ** 20;
const MEMORY = ['96MiB', '96MiB', '96MiB', '96MiB', '192MiB'];
/** tbf buckets: a few ms of traffic at most, so single activations see the link's rate (lab.setRate). */
const BURST = { cable: 512 * 1024, lan: 256 * 1024, far: 128 * 1024 };
const CABLES = [0, 1, 2, 3].map((a) => ({ a, b: (a + 1) % 4, rate: ringRate, label: 'thunderbolt' }));
/**
 * A step of 32 tokens through 16 layers of 16 MiB (streamed once per step), 64 KiB of activation per token
 * (2 MiB a hop, well above the buckets). FLOPs are 1/2048 of the 16-bit default so that stages stay memory bound
 * as on real hardware: this machine's JS matmul runs at ~1 GFLOP/s beside ~8 GB/s of memory bandwidth (an
 * accelerator has ~100× the FLOPs per byte), and at the default the step would be all compute.
 */
const WORKLOAD = {
  id: 'placement-quality',
  memoryBytes: 256 * MiB,
  layers: 16,
  bytesPerLayer: 16 * MiB,
  activationBytesPerToken: 64 * 1024,
  flopsPerTokenPerLayer: (16 * MiB) / 1024,
  tokensPerStep: 32,
};
const REQUEST = { workload: WORKLOAD, sharding: 'pipeline', backend: 'ring' };

const progress = (line: string): void => void process.stderr.write(`[placement-quality --lab] ${line}\n`);

/** Every LAN and cable link measured both ways, every node's memory (as declared) and device figures published. */
const ready = (vs: NodeView[]): boolean =>
  vs.every((v) => {
    const bw = (type: string) => v.topology.links.filter((l) => l.type === type).map((l) => l.bandwidthBps ?? 0);
    return (
      v.topology.nodes.length === HOSTS &&
      v.topology.nodes.every(
        (n) => n.memory && (n as { device?: { memoryBandwidthGBps?: number } }).device?.memoryBandwidthGBps,
      ) &&
      v.topology.links.length === HOSTS * (HOSTS - 1) + 2 * CABLES.length &&
      v.topology.links.every((l) => typeof l.bandwidthBps === 'number' && typeof l.rttMs === 'number') &&
      Math.min(...bw('thunderbolt')) > Math.max(...bw('ethernet'))
    );
  });

/** One bench run. A failed run fails the benchmark: a port taken by another connection is the product's failure. */
async function bench(c: NodeCluster, body: Record<string, unknown>): Promise<PipelineBenchResult> {
  const res = await c.nodes[0]!.fetch('/v1/bench/pipeline', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, steps, warmup: 2 }),
  });
  const r = (await res.json()) as PipelineBenchResult & { error?: { message: string } };
  if (res.status !== 200)
    throw new Error(`bench ${JSON.stringify(body.nodes ?? 'chosen')}: ${res.status} ${r.error?.message}`);
  if (r.measured.wrong !== 0) throw new Error(`bench ${r.nodes.join(',')}: ${r.measured.wrong} activations wrong`);
  return r;
}

async function main(): Promise<void> {
  const why = Lab.unavailableReason() ?? nodeUnavailableReason();
  if (why) {
    process.stderr.write(`placement-quality --lab skipped: ${why}\n`);
    return;
  }
  const owner = new BenchOwner();
  const startedAt = Date.now();
  const loads = [loadavg()[0]!];
  try {
    progress(
      `building a ${HOSTS}-host lab: cable ring h0–h3 at ${ringRate}, LAN ${lanRate}, h4 only on the LAN at ${farRate}`,
    );
    const lab = await Lab.create({ hosts: HOSTS, lanRate, links: CABLES });
    for (const l of CABLES) await lab.setRate(l.a, l.b, ringRate, BURST.cable);
    for (let h = 0; h < HOSTS; h++)
      await lab.setRate(h, 'lan', h === FAR ? farRate : lanRate, h === FAR ? BURST.far : BURST.lan);
    const cableTypes = (h: number): string[] =>
      CABLES.filter((l) => l.a === h || l.b === h).flatMap((l) => [
        '--iface-type',
        `${lab.ifName(h, l.a === h ? l.b : l.a)}=thunderbolt`,
      ]);
    const c = await NodeCluster.start(owner, lab, {
      nodeArgs: (h) => ['--iface-type', 'lan0=ethernet', ...cableTypes(h), '--memory-limit', MEMORY[h] as string],
    });
    const t0 = Date.now();
    await c.converged(300_000, ready);
    progress(`${HOSTS} nodes agreed, links and devices measured in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    await remeasureDevices(c, progress);
    const topology = (await (await c.nodes[0]!.fetch('/v1/topology')).json()) as Parameters<
      typeof placementStateFromTopology
    >[0];
    const state = placementStateFromTopology(topology);
    const names = new Map(c.nodes.map((n) => [n.id as string, `h${n.host}`]));
    const label = (ids: readonly string[]): string => ids.map((id) => names.get(id) ?? id).join('→');
    const options = feasibleOptions(state, REQUEST);
    const exo = exoRuleOption(state, REQUEST);
    progress(`${options.length} feasible options; exo's rule: ${exo ? label(exo.nodes) : 'refused'}`);
    const devices = state.nodes.map((n) => `${names.get(n.id as string)} ${JSON.stringify(n.device)}`).join('; ');
    progress(`device figures: ${devices}`);

    const chosenRuns: PipelineBenchResult[] = [];
    const samples = new Map<string, { option: LabOption; measured: number[]; predicted: number[] }>();
    for (const o of options) samples.set(cycleKey(o.nodes), { option: o, measured: [], predicted: [] });
    for (let round = 0; round < rounds; round++) {
      loads.push(loadavg()[0]!);
      const chosen = await bench(c, { workload: WORKLOAD });
      chosenRuns.push(chosen);
      progress(`round ${round + 1}: the planner chose ${label(chosen.nodes)}: ${chosen.measured.stepMs} ms measured`);
      for (const [i, o] of options.entries()) {
        loads.push(loadavg()[0]!);
        const r = await bench(c, { workload: WORKLOAD, nodes: o.nodes });
        const s = samples.get(cycleKey(o.nodes))!;
        if (r.measured.stepMs !== null) s.measured.push(r.measured.stepMs);
        if (r.predicted.stepMs !== null) s.predicted.push(r.predicted.stepMs);
        progress(
          `round ${round + 1} option ${i + 1}/${options.length} ${label(o.nodes)}: ${r.measured.stepMs} ms measured, ${r.predicted.stepMs} ms predicted`,
        );
      }
    }
    const chosenKey = cycleKey(chosenRuns[0]!.nodes);
    const exoKey = exo ? cycleKey(exo.nodes) : undefined;
    const measured: Measured[] = [...samples.entries()]
      .filter(([, s]) => s.measured.length > 0 && s.predicted.length > 0)
      .map(([key, s]) => ({ key, measuredMs: median(s.measured), predictedMs: median(s.predicted) }));
    const summary = summarize(measured, chosenKey, exoKey);
    const farId = c.nodes.find((n) => n.host === FAR)!.id as string;
    const split = errorSplit(measured, (key) => samples.get(key)!.option.nodes.includes(farId));
    const rows: BenchRow[] = measured
      .sort((a, b) => a.measuredMs - b.measuredMs)
      .map((m) => {
        const s = samples.get(m.key)!;
        const marks = [
          m.key === chosenKey ? 'chosen' : '',
          m.key === exoKey ? 'exo rule' : '',
          m.key === summary.best.key ? 'best measured' : '',
        ].filter(Boolean);
        return {
          option: label(s.option.nodes),
          nodes: s.option.nodes.length,
          layers: s.option.layers.join('/'),
          'predicted ms': +m.predictedMs.toFixed(2),
          'measured ms': +m.measuredMs.toFixed(2),
          'error %': +errorPercent(m.measuredMs, m.predictedMs).toFixed(1),
          '': marks.join(', '),
        };
      });
    const exoAddresses =
      exo && exo.nextHop.join(',') !== measuredNextHops(state, exo.nodes).join(',')
        ? `exo's label addresses (${exo.nextHop.join(', ')}) differ from the measured choice it ran on`
        : "exo's label addresses are the ones its option ran on (cables labelled thunderbolt, h4 on the LAN only)";
    const fmt = (x: number | null, digits = 1): string => (x === null ? 'n/a' : x.toFixed(digits));
    const note = [
      `${summary.options} feasible options, ${rounds} round(s) of ${steps} timed steps each (median per option)`,
      `median |error| ${fmt(summary.medianAbsErrorPercent)} % (target ≤ 15 %), worst ${fmt(summary.worstAbsErrorPercent)} %; ` +
        `through h${FAR} (${split.group.options} options) ${fmt(split.group.medianAbsErrorPercent)} %, ` +
        `without it (${split.rest.options}) ${fmt(split.rest.medianAbsErrorPercent)} %`,
      `the planner chose ${label(chosenRuns[0]!.nodes)} (${chosenRuns.map((r) => r.measured.stepMs).join(', ')} ms in its own runs): ` +
        `${fmt(summary.chosenGapPercent)} % slower than the best measured option ${label(samples.get(summary.best.key)!.option.nodes)} (target ≤ 10 %)`,
      `vs exo's rule as torus's planner without device figures or link measurements ${exo ? label(exo.nodes) : 'n/a'}: ${fmt(summary.vsExo, 2)}× its tokens/s (target ≥ 1.5×); ${exoAddresses}`,
      runConditions(startedAt, Date.now(), loads),
    ].join('\n');
    printTable(
      `pipeline step, measured vs predicted, every feasible option (${HOSTS} hosts: cable ring h0–h3 ${ringRate}, LAN ${lanRate}, h4 ${farRate} only)`,
      rows,
      json,
      note,
    );
  } catch (error) {
    owner.ok = false;
    throw error;
  } finally {
    await owner.close();
  }
}

await main().catch((error: unknown) => {
  process.stderr.write(`placement-quality --lab failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
