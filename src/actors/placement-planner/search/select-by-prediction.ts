import { candidateSets } from './candidate-sets.js';
import { subMatrices } from './cluster-index.js';
import { hopMs, layerMs, predictionScore, predictPipeline, predictTensor, type Prediction } from './cost-model.js';
import type { DropKind, SizeNote } from './plan-result.js';
import type { PlacementRequest } from './placement-request.js';
import { bottleneckUpperBound } from './ring-order.js';
import { cheapChecks, modelStages, orderSet, type Evaluated, type PlanningContext } from './select-set.js';
import { weightBytes } from './model-workload.js';

/**
 * Choice by predicted speed, across every size (docs/placement.md, "Choice by prediction"). Per size the candidate
 * sets are those of today's rule (every set when cheap, else the bounded greedy family) plus the set of the
 * fastest nodes; each passes the same feasibility checks, gets a ring order (bottleneck-optimal, then least RTT,
 * tried in both directions) and a prediction. Sets are visited in order of a lower bound on their predicted cost
 * that needs no ring search (exact stage times, the cheapest outgoing hop of each member), and a set whose bound
 * cannot beat the best found is dropped unsearched, so large clusters search few rings.
 */
export interface PredictedOption {
  readonly e: Evaluated;
  readonly k: number;
  readonly prediction: Prediction;
  /** lower is better (cost-model.ts predictionScore) */
  readonly score: number;
}

export interface PredictionOutcome {
  readonly sizes: SizeNote[];
  readonly evaluated: Evaluated[];
  readonly best?: PredictedOption;
  readonly runnerUp?: PredictedOption;
  /** feasible options with a complete prediction */
  readonly compared: number;
}

/** Relative margin below which two predictions count as equal (today's preference order then decides). */
const EQUAL = 1e-9;
const better = (a: number, b: number): boolean => a < b * (1 - EQUAL);
/**
 * Options predicted within this margin of the best count as equally fast: the smaller size, then today's
 * preference (leaf, cached) decides, so measurement noise between identical machines does not move a plan.
 */
export const NEAR_BEST = 0.02;

export function predictOption(ctx: PlanningContext, e: Evaluated, order: readonly number[]): Prediction {
  const { index, request } = ctx;
  const k = order.length;
  if (request.sharding === 'tensor' && k > 1) return predictTensor(index, order, request.workload, request.objective);
  if (request.workload.modelBytes) {
    const stages = modelStages(ctx, order);
    if ('short' in stages) throw new Error(`predictOption: an order whose stages do not fit (${stages.short})`);
    return predictPipeline(index, order, stages.layers, request.workload, request.objective, stages.bytes);
  }
  const layersOf = new Map<number, number>();
  e.members.forEach((m, i) => layersOf.set(m, e.split?.[i] ?? request.workload.layers));
  return predictPipeline(
    index,
    order,
    order.map((m) => layersOf.get(m) as number),
    request.workload,
    request.objective,
  );
}

export function selectByPrediction(
  ctx: PlanningContext,
  sizes: readonly number[],
  skip: (k: number) => string | undefined,
): PredictionOutcome {
  const { index, request } = ctx;
  const w = request.workload;
  const n = index.n;
  const perLayer = index.nodes.map((_, i) => layerMs(index, i, w));
  // Cheapest outgoing pipeline hop between every ordered pair (NaN: not predictable).
  const hopCost = new Float64Array(n * n).fill(Number.NaN);
  for (let a = 0; a < n; a++)
    for (let b = 0; b < n; b++) if (a !== b) hopCost[a * n + b] = hopMs(index, a, b, w) ?? Number.NaN;
  const notes: SizeNote[] = [];
  const all: Evaluated[] = [];
  const options: PredictedOption[] = [];
  // The best two so far: a set is pruned only when its bound cannot beat the second, so the runner-up is exact.
  let best: PredictedOption | undefined;
  let second: PredictedOption | undefined;
  for (const k of sizes) {
    const why = skip(k);
    if (why) {
      notes.push({ size: k, generation: 'skipped', sets: 0, feasible: 0, dropped: {}, why });
      continue;
    }
    const pool = k >= 3 ? ctx.ringCore : ctx.eligible;
    const family = candidateSets(k >= 3 ? { ...ctx, eligible: pool } : ctx, k);
    const sets = withFastestSet(family.sets, pool, ctx.required, k, perLayer);
    const evaluated = sets.map((members) => cheapChecks(ctx, k, members));
    all.push(...evaluated);
    const bounded: { e: Evaluated; bound: number }[] = [];
    for (const e of evaluated) {
      if (e.dropped) continue;
      const bound = lowerBound(ctx, k, e, perLayer, hopCost);
      if (bound === undefined) e.notEvaluated = 'not predicted: a member has no device figures';
      else bounded.push({ e, bound });
    }
    bounded.sort(
      (a, b) =>
        a.bound - b.bound ||
        Number(b.e.hasLeaf) - Number(a.e.hasLeaf) ||
        b.e.cached - a.e.cached ||
        b.e.memory - a.e.memory ||
        lexCompare(a.e.members, b.e.members),
    );
    let feasible = 0;
    for (const { e, bound } of bounded) {
      if (best && second && !better(bound, second.score) && bound > best.score * (1 + NEAR_BEST)) {
        e.dropped = {
          kind: 'predicted',
          why: `predicted slower: at best ${formatScoreMs(bound, request.objective)}, the chosen option's is ${formatScoreMs(best.score, request.objective)}`,
        };
        continue;
      }
      const m = subMatrices(index, e.members);
      if (!orderSet(ctx, k, e, m.hop, m.rtt, bottleneckUpperBound(k, m.hop))) continue;
      feasible++;
      const option = bestDirection(ctx, e, k);
      if (!option) {
        e.notEvaluated = 'not predicted: a hop it uses is unmeasured';
        continue;
      }
      options.push(option);
      if (!best || better(option.score, best.score)) {
        second = best;
        best = option;
      } else if (!second || better(option.score, second.score)) second = option;
    }
    const dropped: Partial<Record<DropKind, number>> = {};
    for (const e of evaluated) if (e.dropped) dropped[e.dropped.kind] = (dropped[e.dropped.kind] ?? 0) + 1;
    notes.push({
      size: k,
      generation: family.exhaustive ? 'exhaustive' : 'greedy',
      sets: evaluated.length,
      feasible,
      dropped,
    });
  }
  if (!best) return { sizes: notes, evaluated: all, compared: options.length };
  const fastest = best.score;
  const near = options.filter((o) => o.score <= fastest * (1 + NEAR_BEST));
  near.sort(
    (a, b) =>
      a.k - b.k ||
      Number(b.e.hasLeaf) - Number(a.e.hasLeaf) ||
      b.e.cached - a.e.cached ||
      a.score - b.score ||
      lexCompare(a.e.members, b.e.members),
  );
  best = near[0] as PredictedOption;
  best.e.chosen = true;
  let runnerUp: PredictedOption | undefined;
  for (const o of options) {
    if (o === best) continue;
    if (!runnerUp || better(o.score, runnerUp.score)) runnerUp = o;
    o.e.dropped = {
      kind: 'predicted',
      why: `predicted slower: ${describe(o.prediction)} against ${describe(best.prediction)}`,
    };
  }
  return { sizes: notes, evaluated: all, best, compared: options.length, ...(runnerUp ? { runnerUp } : {}) };
}

/** The searched order or its reverse (hops are directed), whichever predicts better; undefined when unpredictable. */
function bestDirection(ctx: PlanningContext, e: Evaluated, k: number): PredictedOption | undefined {
  const order = e.order as readonly number[];
  const reversed = [order[0] as number, ...order.slice(1).reverse()];
  let pick: PredictedOption | undefined;
  let pickOrder = order;
  const model = ctx.request.workload.modelBytes && ctx.request.sharding === 'pipeline';
  for (const candidate of k > 2 ? [order, reversed] : [order]) {
    // A model's reversed order has another last stage: it may not fit where the searched one does.
    const stages = model ? modelStages(ctx, candidate) : undefined;
    if (stages && 'short' in stages) continue;
    const prediction = predictOption(ctx, e, candidate);
    const score = predictionScore(prediction);
    if (score === undefined) continue;
    if (!pick || better(score, pick.score)) {
      pick = { e, k, prediction, score };
      pickOrder = candidate;
    }
  }
  // The plan follows the better direction (jaccl keeps its coordinator at rank 0: the reverse fixes position 0).
  e.order = pickOrder;
  if (model) {
    const stages = modelStages(ctx, pickOrder);
    if (!('short' in stages)) e.split = e.members.map((m) => stages.layers[pickOrder.indexOf(m)] as number);
  }
  return pick;
}

/**
 * A cost no ring order of this set can beat. Pipeline: the exact stage times plus, per member, its cheapest
 * outgoing hop (latency: summed; throughput: the slowest of all). Tensor: the compute alone.
 */
function lowerBound(
  ctx: PlanningContext,
  k: number,
  e: Evaluated,
  perLayer: readonly (number | undefined)[],
  hopCost: Float64Array,
): number | undefined {
  const { request, index } = ctx;
  const w = request.workload;
  if (e.members.some((m) => perLayer[m] === undefined)) return undefined;
  if (request.sharding === 'tensor' && k > 1) {
    const share = Math.max(...e.members.map((m) => layerMs(index, m, w, 1 / k) as number));
    return w.layers * share;
  }
  const stages = w.modelBytes
    ? modelStageBound(
        w.modelBytes,
        k,
        e.members.map((m) => (perLayer[m] as number) / w.bytesPerLayer),
      )
    : e.members.map((m, i) => (perLayer[m] as number) * (e.split?.[i] ?? w.layers));
  let hopSum = 0,
    hopMin = Number.POSITIVE_INFINITY;
  if (k > 1)
    for (const a of e.members) {
      let least = Number.POSITIVE_INFINITY;
      for (const b of e.members) {
        const c = hopCost[a * index.n + b] as number;
        if (a !== b && !Number.isNaN(c)) least = Math.min(least, c);
      }
      // No predictable hop out: the set can still be feasible, its prediction just will not be complete.
      if (least === Number.POSITIVE_INFINITY) least = 0;
      hopSum += least;
      hopMin = Math.min(hopMin, least);
    }
  if (request.objective === 'throughput') return Math.max(...stages, k > 1 ? hopMin : 0);
  return stages.reduce((s, x) => s + x, 0) + hopSum;
}

/**
 * A model's stage times before the ring order (and so the split) is known: the stages together hold every
 * tensor once and the `all` ones k times, and no member pays less per byte than the cheapest. That total spread
 * evenly over the k stages bounds both the sum of the stage times and the slowest.
 */
function modelStageBound(mb: NonNullable<PlacementRequest['workload']['modelBytes']>, k: number, perByte: number[]) {
  const total = weightBytes(mb) + (k - 1) * mb.all;
  return new Array<number>(k).fill((Math.min(...perByte) * total) / k);
}

/** The family, plus the set of the k fastest nodes (required ones always in), which network growth can miss. */
function withFastestSet(
  sets: readonly number[][],
  pool: readonly number[],
  required: readonly number[],
  k: number,
  perLayer: readonly (number | undefined)[],
): number[][] {
  const need = k - required.length;
  const others = pool
    .filter((v) => !required.includes(v) && perLayer[v] !== undefined)
    .sort((a, b) => (perLayer[a] as number) - (perLayer[b] as number) || a - b);
  if (need < 0 || others.length < need) return [...sets];
  const fastest = [...required, ...others.slice(0, need)].sort((a, b) => a - b);
  const key = fastest.join(',');
  return sets.some((s) => s.join(',') === key) ? [...sets] : [...sets, fastest];
}

const lexCompare = (a: readonly number[], b: readonly number[]): number => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
};

const ms = (x: number): string => `${Math.round(x * 1e3) / 1e3} ms`;
const formatScoreMs = (score: number, objective: string): string =>
  objective === 'throughput' ? `${ms(score)} per step at full pipeline` : `${ms(score)} per step`;

export function describe(p: Prediction): string {
  return `${p.stepMs === null ? 'unknown' : ms(p.stepMs)} per step, ${p.tokensPerS ?? 'unknown'} tokens/s`;
}
