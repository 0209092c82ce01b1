import { artifactWhy } from './artifact-rule.js';
import type { ClusterIndex } from './cluster-index.js';
import type { Prediction } from './cost-model.js';
import { formatBytes, formatScore } from './format.js';
import type { SizeNote } from './plan-result.js';
import { describe, type PredictionOutcome } from './select-by-prediction.js';
import type { Evaluated, PlanningContext } from './select-set.js';

/** The `why` lines of a plan: what decided the chosen option, in the words the API and CLI show. */
export function pinnedWhy(
  ctx: PlanningContext,
  winner: Evaluated,
  names: readonly string[],
  predicted: Prediction,
): string[] {
  return [
    `pinned by the request: ${names.join(' → ')} (the set and its ring order are the caller's; the planner checked them, split the layers and chose the addresses)`,
    predicted.unmeasured.length > 0
      ? `predicted: incomplete, unmeasured ${predicted.unmeasured.join(', ')}`
      : `predicted: ${describe(predicted)}`,
    `available memory: ${formatBytes(winner.memory)} for ${formatBytes(ctx.request.workload.memoryBytes)} needed`,
  ];
}

export function chosenWhy(
  ctx: PlanningContext,
  winner: Evaluated,
  sizes: readonly SizeNote[],
  index: ClusterIndex,
): string[] {
  const k = winner.members.length;
  const why = [
    sizes.length > 1
      ? `smallest feasible size: ${k} node(s); smaller sizes had no feasible set`
      : `smallest feasible size: ${k} node(s)`,
  ];
  const leaves = winner.members.filter((m) => index.leaf[m]).map((m) => index.ids[m]);
  why.push(
    leaves.length > 0
      ? `contains a leaf node (${leaves.join(', ')})`
      : 'no feasible set of this size contains a leaf node',
  );
  why.push(`cached fraction of ${ctx.request.workload.id} summed over the set: ${winner.cached}`);
  const artifacts = artifactWhy(ctx.request.workload.artifactBytes, ctx.cached, winner.members, index.ids);
  if (artifacts) why.push(artifacts);
  if (k > 1 && winner.ring)
    why.push(
      `slowest ring hop: ${formatScore(winner.ring.bottleneck)}; RTT sum ${Math.round(winner.ring.rttSum * 1e6) / 1e6} ms`,
    );
  why.push(
    `available memory: ${formatBytes(winner.memory)} for ${formatBytes(ctx.request.workload.memoryBytes)} needed`,
  );
  return why;
}

export function predictionWhy(ctx: PlanningContext, outcome: PredictionOutcome, winner: Evaluated): string[] {
  const best = outcome.best as NonNullable<PredictionOutcome['best']>;
  const names = (e: Evaluated): string => (e.order ?? e.members).map((m) => ctx.index.ids[m]).join(', ');
  const goal = ctx.request.objective === 'throughput' ? 'most predicted tokens/s' : 'least predicted step time';
  const why = [
    `${goal} of ${outcome.compared} feasible option(s) with a complete prediction: ${winner.members.length} node(s), ${describe(best.prediction)}`,
  ];
  const up = outcome.runnerUp;
  why.push(
    up
      ? `runner-up: ${names(up.e)} (${up.k} node(s)), ${describe(up.prediction)}`
      : 'no other feasible option had a complete prediction',
  );
  why.push(
    `available memory: ${formatBytes(winner.memory)} for ${formatBytes(ctx.request.workload.memoryBytes)} needed`,
  );
  return why;
}
