/**
 * A model pipeline's re-placement that keeps its surviving stages (docs/placement.md, "Re-placing a model
 * pipeline"): every surviving node keeps its position and its layers, so its shard directory and every chunk it
 * fetched stay valid; each lost position gets a spare node that holds that stage's real bytes. The spare for each
 * lost position is chosen by the planner's own prediction (the step time, or the period for throughput) over the
 * orders that pass the pinned checks (memory per stage, a usable link each way on every ring hop); without a
 * complete prediction, by the slowest hop, then the RTT sum. The order only changes by the spare standing where
 * the lost node stood, so the stages stay in layer order. No spare fits: a refusal naming why, and the caller
 * plans afresh.
 */
import { candidateNotes } from './explain.js';
import { formatBytes } from './format.js';
import { predictionScore, type Prediction } from './cost-model.js';
import { stageBytes, weightBytes } from './model-workload.js';
import { evaluatePinned } from './pinned-placement.js';
import type { KeepStages } from './placement-request.js';
import type { Explanation, Plan, PlanResult, RefusalKind, SizeNote } from './plan-result.js';
import { describe, predictOption } from './select-by-prediction.js';
import type { Evaluated, PlanningContext } from './select-set.js';

/** Orders evaluated at most: several lost stages over many spares are searched in spare id order up to this. */
export const MAX_KEPT_STAGE_OPTIONS = 2_000;

interface Option {
  readonly e: Evaluated;
  readonly order: readonly number[];
  readonly prediction: Prediction;
  readonly score: number | undefined;
}

/** Negative when `a` is the better option: predicted faster, else the better ring, else spare id order. */
function compareOptions(a: Option, b: Option): number {
  if (a.score !== undefined && b.score !== undefined && Math.abs(a.score - b.score) > 1e-9 * Math.max(a.score, b.score))
    return a.score - b.score;
  if ((a.score === undefined) !== (b.score === undefined)) return a.score === undefined ? 1 : -1;
  const ra = a.e.ring!,
    rb = b.e.ring!;
  if (ra.bottleneck !== rb.bottleneck) return rb.bottleneck - ra.bottleneck;
  if (ra.rttSum !== rb.rttSum) return ra.rttSum - rb.rttSum;
  for (let i = 0; i < a.order.length; i++)
    if (a.order[i] !== b.order[i]) return (a.order[i] as number) - (b.order[i] as number);
  return 0;
}

/** `build` turns the chosen order into the plan (plan-placement.ts buildPlan, passed in to keep the modules acyclic). */
export function planKeptStages(
  ctx: PlanningContext,
  base: Explanation,
  keep: KeepStages,
  build: (ctx: PlanningContext, winner: Evaluated, explanation: Explanation) => Plan,
): PlanResult {
  const { index, request } = ctx;
  const w = request.workload;
  const mb = w.modelBytes!;
  const refuse = (kind: RefusalKind, why: string, evaluated: readonly Evaluated[] = []): PlanResult => {
    const notes = candidateNotes(index, evaluated);
    const note: SizeNote = {
      size: keep.nodes.length,
      generation: 'kept-stages',
      sets: evaluated.length,
      feasible: 0,
      dropped: {},
      why,
    };
    return {
      refusal: {
        kind,
        message: `Cannot keep the surviving stages of ${w.id}: ${why}`.slice(0, 4000),
        explanation: { ...base, sizes: [note], candidates: notes.notes, candidatesOmitted: notes.omitted },
      },
    };
  };
  const fixed: PlanningContext = { ...ctx, fixedLayers: keep.layers };
  const eligible = new Set(ctx.eligible);
  const slots: (number | undefined)[] = [];
  for (const name of keep.nodes) {
    if (name === null) {
      slots.push(undefined);
      continue;
    }
    const i = index.indexOf.get(name);
    if (i === undefined || !eligible.has(i))
      return refuse('nodes', `surviving node ${name} is not in the state or has no memory figure`);
    slots.push(i);
  }
  const lost = slots.flatMap((s, p) => (s === undefined ? [p] : []));
  const starts = keep.layers.map((_, p) => keep.layers.slice(0, p).reduce((s, l) => s + l, 0));
  const range = (p: number): string => `layers ${starts[p]}-${(starts[p] as number) + (keep.layers[p] as number) - 1}`;
  // A spare must hold the lost stage's real bytes (its share of memoryBytes), as modelStages checks every stage.
  const weights = weightBytes(mb);
  const need = (p: number): number =>
    Math.ceil(
      (stageBytes(mb, starts[p] as number, (starts[p] as number) + (keep.layers[p] as number)) * w.memoryBytes) /
        weights,
    );
  const spares = ctx.eligible.filter((i) => !slots.includes(i));
  const tooSmall: string[] = [];
  const fitting = lost.map((p) =>
    spares.filter((i) => {
      const fits = (ctx.memory[i] as number) >= need(p);
      if (!fits)
        tooSmall.push(
          `${index.ids[i]} has ${formatBytes(ctx.memory[i] as number)} for ${range(p)} (${formatBytes(need(p))})`,
        );
      return fits;
    }),
  );
  const missing = ctx.required.filter((r) => !slots.includes(r) && !fitting.some((f) => f.includes(r)));
  if (missing.length > 0)
    return refuse('nodes', `required node ${missing.map((r) => index.ids[r]).join(', ')} cannot take a lost stage`);
  const evaluated: Evaluated[] = [];
  let best: Option | undefined;
  let runnerUp: Option | undefined;
  const consider = (order: readonly number[]): void => {
    if (ctx.required.some((r) => !order.includes(r))) return;
    const outcome = evaluatePinned(fixed, order);
    evaluated.push(outcome.e);
    if (!outcome.ok) return;
    outcome.e.chosen = false;
    const prediction = predictOption(fixed, outcome.e, order);
    const option: Option = { e: outcome.e, order, prediction, score: predictionScore(prediction) };
    if (!best || compareOptions(option, best) < 0) {
      runnerUp = best;
      best = option;
    } else if (!runnerUp || compareOptions(option, runnerUp) < 0) runnerUp = option;
  };
  // Every assignment of distinct fitting spares to the lost positions, in spare id order, up to the budget.
  const order = [...slots] as number[];
  const used = new Set<number>();
  const assign = (j: number): void => {
    if (evaluated.length >= MAX_KEPT_STAGE_OPTIONS) return;
    if (j === lost.length) {
      consider([...order]);
      return;
    }
    const p = lost[j] as number;
    for (const spare of fitting[j] as number[]) {
      if (used.has(spare)) continue;
      used.add(spare);
      order[p] = spare;
      assign(j + 1);
      used.delete(spare);
    }
  };
  assign(0);
  const lostWhat = lost.map(range).join(', ');
  if (!best) {
    const why =
      spares.length === 0
        ? `no spare node for ${lostWhat}: every eligible node already holds a stage`
        : evaluated.length === 0
          ? `no spare node has the memory for ${lostWhat}: ${tooSmall.join('; ')}`
          : `no spare node fits ${lostWhat}: ${[...new Set(evaluated.map((e) => e.dropped?.why ?? 'not evaluated'))].join('; ')}`;
    return refuse(tooSmall.length > 0 && evaluated.length === 0 ? 'memory' : 'nodes', why, evaluated);
  }
  const chosen = best;
  for (const e of evaluated) if (e !== chosen.e && !e.dropped) e.dropped = { kind: 'predicted', why: 'a better spare' };
  chosen.e.chosen = true;
  const note: SizeNote = {
    size: keep.nodes.length,
    generation: 'kept-stages',
    sets: evaluated.length,
    feasible: evaluated.filter((e) => e.ring !== undefined).length,
    dropped: {},
  };
  const notes = candidateNotes(index, evaluated, undefined, 'kept the surviving stages');
  const plan = build(fixed, chosen.e, {
    ...base,
    sizes: [note],
    candidates: notes.notes,
    candidatesOmitted: notes.omitted,
  });
  const kept = slots.flatMap((s, p) => (s === undefined ? [] : [`${index.ids[s]} ${range(p)}`]));
  const moved = lost.map((p) => `${range(p)} to ${index.ids[chosen.order[p] as number]}`);
  const up = runnerUp as Option | undefined;
  const why = [
    `kept the surviving stages: ${kept.join(', ')} (same layers and shard directories, nothing re-fetched); lost ${moved.join(', ')}`,
    `spare chosen ${chosen.score !== undefined ? `by prediction (${describe(chosen.prediction)})` : 'by the ring (no complete prediction)'} of ${evaluated.filter((e) => e.ring !== undefined).length} fitting option(s)${up ? `; runner-up: ${up.order.map((m) => index.ids[m]).join(', ')}` : ''}`,
    ...plan.explanation.chosen!.why.slice(1),
  ];
  return { ...plan, explanation: { ...plan.explanation, chosen: { ...plan.explanation.chosen!, why } } };
}
