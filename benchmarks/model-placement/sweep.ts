/**
 * The core of the model-placement benchmark on one lab cluster holding the model: every feasible option (node set
 * × the ring order torus predicts fastest for it), torus's predictions for a decode step and a prefill, the torch job
 * run on each, the planner's own choices and exo's rule. Returns the rows and the summary figures; printing is the
 * caller's (index.ts). The test (test/benchmarks/model-placement) runs it on a 3-host lab.
 */
import { loadavg } from 'node:os';
import type { NodeCluster } from '../../src/lab/index.js';
import {
  exoRuleOption,
  feasibleOptions,
  measuredNextHops,
  placementStateFromTopology,
} from '../placement-quality/lab-options.js';
import { errorPercent, median, summarize, type Measured, type QualitySummary } from '../placement-quality/lab-stats.js';
import { labeller } from './lab-shapes.js';
import {
  calibrate,
  plannerChoice,
  predictPinned,
  servedFeatures,
  stepWorkload,
  type Calibrated,
  type PinnedPrediction,
} from './predictions.js';
import { runTorch, type JobShape, type TorchRun } from './torch-run.js';

export interface SweepOptions {
  readonly modelId: string;
  readonly modelBytes: number;
  readonly layers: number;
  readonly hiddenSize: number;
  readonly job: JobShape;
  /** one option per set size (the best predicted) instead of every set */
  readonly quick: boolean;
  /** runs of every option, one after the other per round; the figures are the medians over rounds */
  readonly rounds: number;
  readonly calibrationCommand: readonly string[];
  readonly say: (line: string) => void;
}

export interface OptionResult {
  readonly key: string;
  readonly label: string;
  readonly nodes: readonly string[];
  readonly layers: readonly number[];
  readonly predictedDecodeMs: number;
  readonly predictedPrefillMs: number;
  /** one run a round */
  readonly runs: readonly TorchRun[];
  /** medians over the rounds of each run's median step */
  readonly decodeMs: number;
  readonly prefillMs: number;
  /** every run's ranks ran on the option's nodes over the planned addresses */
  readonly overPlannedAddresses: boolean;
}

export interface SweepResult {
  readonly options: readonly OptionResult[];
  readonly decode: QualitySummary;
  readonly prefill: QualitySummary;
  /**
   * the planner's choice for a decode step (`torus run --model` without --nodes; with `framework`, placed through
   * the API and run pinned) and its own run
   */
  readonly plannerDecode: { readonly key: string; readonly run: TorchRun };
  /** the planner's choice for a prefill (an instance placed with tokensPerStep = the prompt) */
  readonly plannerPrefillKey: string;
  readonly exoKey: string | undefined;
  /** exo's label addresses differ from the measured ones its option ran on */
  readonly exoAddressesDiffer: boolean;
  readonly calibration: readonly Calibrated[] | undefined;
  readonly framework: boolean;
  readonly loads: readonly number[];
}

const keyOf = (nodes: readonly string[]): string => nodes.join(',');
const setOf = (nodes: readonly string[]): string => [...nodes].sort().join(',');

interface Candidate {
  readonly decode: PinnedPrediction;
  readonly prefill: PinnedPrediction;
}

/**
 * The order torus would give a set: the one predicted fastest for the prefill, where the links show (a decode step's
 * hidden states are a few KiB: every order of a set predicts within a fraction of a millisecond), then for decode.
 */
const faster = (a: Candidate, b: Candidate): boolean =>
  a.prefill.stepMs! < b.prefill.stepMs! ||
  (a.prefill.stepMs === b.prefill.stepMs && a.decode.stepMs! < b.decode.stepMs!);

export async function sweep(c: NodeCluster, o: SweepOptions): Promise<SweepResult> {
  const n0 = c.nodes[0]!;
  const label = labeller(c);
  const served = await servedFeatures(n0);
  const calibration = await calibrate(c, served, o.calibrationCommand, o.say);
  const decodeWork = stepWorkload(o.modelId, 1, served);
  const prefillWork = stepWorkload(o.modelId, o.job.promptTokens, served);
  const state = placementStateFromTopology(
    (await (await n0.fetch('/v1/topology')).json()) as Parameters<typeof placementStateFromTopology>[0],
  );
  // Sets and ring orders by the sizes alone, memory relaxed by a tenth so that no set the model's own split
  // (embeddings on the first stage, the head on the last) would accept is left out; the pinned previews then
  // check each with the model's real bytes and drop what the planner refuses.
  const sizes = { id: 'model-placement', layers: o.layers, hiddenSize: o.hiddenSize };
  const orders = feasibleOptions(state, {
    workload: { ...sizes, memoryBytes: Math.floor(o.modelBytes * 0.9) },
    sharding: 'pipeline',
    backend: 'ring',
  });
  const best = new Map<string, Candidate>();
  for (const order of orders) {
    const decode = await predictPinned(n0, decodeWork, order.nodes);
    const prefill = decode && (await predictPinned(n0, prefillWork, order.nodes));
    if (!decode || !prefill || decode.stepMs === null || prefill.stepMs === null) continue;
    const held = best.get(setOf(order.nodes));
    if (!held || faster({ decode, prefill }, held)) best.set(setOf(order.nodes), { decode, prefill });
  }
  let chosen = [...best.values()];
  if (o.quick) {
    const bySize = new Map<number, Candidate>();
    for (const x of chosen) {
      const held = bySize.get(x.decode.nodes.length);
      if (!held || faster(x, held)) bySize.set(x.decode.nodes.length, x);
    }
    chosen = [...bySize.values()];
  }
  o.say(`${best.size} feasible node sets${o.quick ? `, ${chosen.length} run (--quick: one per size)` : ''}`);

  const loads = [loadavg()[0]!];
  // `torus run` names no framework: when the node takes `workload.framework`, the planner's choice with it is learnt
  // from a placement and run pinned; otherwise `torus run --model` places it itself.
  const plannerRun = await runTorch(
    c,
    o.modelId,
    served.framework ? await plannerChoice(n0, decodeWork) : undefined,
    o.job,
    o.hiddenSize,
  );
  o.say(`the planner's decode choice ${label(plannerRun.nodes)}: decode ${plannerRun.decodeMs} ms`);
  const prefillChoice = await plannerChoice(n0, prefillWork);
  const exo = exoRuleOption(state, {
    workload: { ...sizes, memoryBytes: o.modelBytes },
    sharding: 'pipeline',
    backend: 'ring',
  });
  // The planner's choices and exo's rule are measured as options too, in exactly their order.
  for (const nodes of [plannerRun.nodes, prefillChoice, exo?.nodes]) {
    if (!nodes || chosen.some((x) => keyOf(x.decode.nodes) === keyOf(nodes))) continue;
    const decode = await predictPinned(n0, decodeWork, nodes);
    const prefill = await predictPinned(n0, prefillWork, nodes);
    if (decode?.stepMs == null || prefill?.stepMs == null) throw new Error(`no prediction for ${label(nodes)}`);
    chosen.push({ decode, prefill });
  }

  const runs: TorchRun[][] = chosen.map(() => []);
  for (let round = 0; round < o.rounds; round++)
    for (const [i, x] of chosen.entries()) {
      loads.push(loadavg()[0]!);
      const run = await runTorch(c, o.modelId, x.decode.nodes, o.job, o.hiddenSize);
      runs[i]!.push(run);
      o.say(
        `round ${round + 1}, option ${i + 1}/${chosen.length} ${label(x.decode.nodes)}: decode ${run.decodeMs.toFixed(1)} ms ` +
          `(predicted ${x.decode.stepMs!.toFixed(1)}), prefill ${run.prefillMs.toFixed(1)} ms (predicted ` +
          `${x.prefill.stepMs!.toFixed(1)})${run.overPlannedAddresses ? '' : ' — NOT over the planned addresses'}`,
      );
    }
  const options: OptionResult[] = chosen.map((x, i) => ({
    key: keyOf(x.decode.nodes),
    label: label(x.decode.nodes),
    nodes: x.decode.nodes,
    layers: x.decode.layers,
    predictedDecodeMs: x.decode.stepMs!,
    predictedPrefillMs: x.prefill.stepMs!,
    runs: runs[i]!,
    decodeMs: median(runs[i]!.map((r) => r.decodeMs)),
    prefillMs: median(runs[i]!.map((r) => r.prefillMs)),
    overPlannedAddresses: runs[i]!.every((r) => r.overPlannedAddresses && r.nodes.join() === x.decode.nodes.join()),
  }));
  const measured = (pick: (r: OptionResult) => [number, number]): Measured[] =>
    options.map((r) => ({ key: r.key, measuredMs: pick(r)[0], predictedMs: pick(r)[1] }));
  const exoKey = exo ? keyOf(exo.nodes) : undefined;
  return {
    options,
    decode: summarize(
      measured((r) => [r.decodeMs, r.predictedDecodeMs]),
      keyOf(plannerRun.nodes),
      exoKey,
    ),
    prefill: summarize(
      measured((r) => [r.prefillMs, r.predictedPrefillMs]),
      keyOf(prefillChoice),
      exoKey,
    ),
    plannerDecode: { key: keyOf(plannerRun.nodes), run: plannerRun },
    plannerPrefillKey: keyOf(prefillChoice),
    exoKey,
    exoAddressesDiffer: exo ? exo.nextHop.join() !== measuredNextHops(state, exo.nodes).join() : false,
    calibration,
    framework: served.framework,
    loads,
  };
}

/** |measured − predicted| / predicted, percent. */
export const absError = (measuredMs: number, predictedMs: number): number =>
  Math.abs(errorPercent(measuredMs, predictedMs));
