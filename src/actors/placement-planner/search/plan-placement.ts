import { artifactBytesToMove } from './artifact-rule.js';
import { scoreBandwidth } from './address-choice.js';
import type { PlacementInput } from './placement-input.js';
import { indexCluster, type ClusterIndex } from './cluster-index.js';
import { candidateNotes, explainHops, hopDirection, predictAllReduce } from './explain.js';
import { formatBytes } from './format.js';
import { ringHostsByNode } from './hosts-by-node.js';
import { coordinatorRoutes, jacclCoordinators, jacclDevicesMatrix } from './jaccl.js';
import { meshAddresses } from './mesh-addresses.js';
import type { PlacementRequest } from './placement-request.js';
import type { Explanation, HopDirection, Instance, Plan, PlanResult, Shard, SizeNote } from './plan-result.js';
import { chooseInstancePort, DEFAULT_INSTANCE_PORTS, DEFAULT_RESERVED_PORTS, type PortRange } from './ports.js';
import { composeRefusal, earlyRefusal } from './refusal.js';
import { createRng, rngUuid } from './rng.js';
import { ValidationError } from '../../../protocols/errors.js';
import {
  evaluateSize,
  modelStages,
  tensorSizeProblem,
  type Evaluated,
  type PlanningContext,
  type SizeOutcome,
} from './select-set.js';
import { evaluatePinned } from './pinned-placement.js';
import { planKeptStages } from './kept-stages.js';
import { layerMs } from './cost-model.js';
import { describe, predictOption, selectByPrediction, type PredictionOutcome } from './select-by-prediction.js';
import { chosenWhy, pinnedWhy, predictionWhy } from './plan-why.js';

export interface PlanOptions {
  /** Seeds every random choice (search restarts, port, instance id). */
  readonly seed: number;
  /** Ports the instance port must avoid (the nodes' API ports). Default: 52415. */
  readonly reservedPorts?: readonly number[];
  /** Where the instance port is drawn from (default 10000–19999, below every default ephemeral range). */
  readonly portRange?: PortRange;
  /** Only these set sizes (previews ask for one size at a time). */
  readonly sizes?: readonly number[];
}

/**
 * State + request → an instance plan or a refusal, both as data. Pure and deterministic for a given seed.
 * Sizes are tried from the smallest allowed upwards; the first size with a feasible set is the answer.
 */
export function planPlacement(state: PlacementInput, request: PlacementRequest, options: PlanOptions): PlanResult {
  const index = indexCluster(state, request.backend);
  const base: Explanation = {
    seed: options.seed,
    request: {
      sharding: request.sharding,
      backend: request.backend,
      workload: request.workload.id,
      minNodes: request.minNodes,
      requiredNodes: request.requiredNodes,
      ...(request.nodes ? { nodes: request.nodes } : {}),
    },
    sizes: [],
    candidates: [],
    candidatesOmitted: 0,
  };
  const early = earlyRefusal(index, request, base);
  if (early) return early;
  const memory = index.nodes.map((node) => node.memory?.ramAvailable ?? Number.NaN);
  const eligible = index.nodes.map((_, i) => i).filter((i) => !Number.isNaN(memory[i] as number));
  const ctx: PlanningContext = {
    index,
    request,
    eligible,
    ringCore: twoCore(index, eligible),
    required: request.requiredNodes.map((id) => index.indexOf.get(id) as number).sort((a, b) => a - b),
    memory,
    cached: index.nodes.map((node) => node.cached[request.workload.id] ?? 0),
    rng: createRng(options.seed),
  };
  if (request.nodes) return planPinned(ctx, base, options, request.nodes);
  if (request.keepStages)
    return planKeptStages(ctx, base, request.keepStages, (c, e, x) =>
      buildPlan(c, e, x, options, undefined, 'kept-stages'),
    );
  const sizes: SizeNote[] = [];
  const outcomes: SizeOutcome[] = [];
  const low = Math.max(request.minNodes, ctx.required.length, 1);
  // Device figures on some node: choose by predicted speed over every size. Without them (or when no option has
  // a complete prediction) today's rule decides: the smallest feasible size, then the preference order.
  if (ctx.eligible.some((i) => layerMs(index, i, request.workload) !== undefined)) {
    const all: number[] = [];
    for (let k = low; k <= ctx.eligible.length; k++) if (!options.sizes || options.sizes.includes(k)) all.push(k);
    const outcome = selectByPrediction(ctx, all, (k) => skipSize(ctx, k));
    if (outcome.best) {
      const notes = candidateNotes(
        index,
        outcome.evaluated,
        artifactBytesToMove(request.workload.artifactBytes, ctx.cached),
        `best predicted: ${describe(outcome.best.prediction)}`,
      );
      return buildPlan(
        ctx,
        outcome.best.e,
        { ...base, sizes: outcome.sizes, candidates: notes.notes, candidatesOmitted: notes.omitted },
        options,
        outcome,
      );
    }
  }
  for (let k = low; k <= ctx.eligible.length; k++) {
    if (options.sizes && !options.sizes.includes(k)) continue;
    const skip = skipSize(ctx, k);
    if (skip) {
      sizes.push({ size: k, generation: 'skipped', sets: 0, feasible: 0, dropped: {}, why: skip });
      continue;
    }
    const outcome = evaluateSize(ctx, k);
    sizes.push(outcome.note);
    outcomes.push(outcome);
    if (outcome.winner) {
      const notes = candidateNotes(
        index,
        outcome.evaluated,
        artifactBytesToMove(request.workload.artifactBytes, ctx.cached),
      );
      return buildPlan(
        ctx,
        outcome.winner,
        { ...base, sizes, candidates: notes.notes, candidatesOmitted: notes.omitted },
        options,
      );
    }
  }
  const evaluated = outcomes.flatMap((o) => o.evaluated);
  const notes = candidateNotes(index, evaluated);
  return composeRefusal(ctx, { ...base, sizes, candidates: notes.notes, candidatesOmitted: notes.omitted }, evaluated);
}

/** The caller's set and order, checked, split and predicted as a chosen one would be; or the reason it does not fit. */
function planPinned(
  ctx: PlanningContext,
  base: Explanation,
  options: PlanOptions,
  nodes: readonly string[],
): PlanResult {
  const { index } = ctx;
  const outcome = evaluatePinned(
    ctx,
    nodes.map((id) => index.indexOf.get(id) as number),
  );
  const note: SizeNote = {
    size: nodes.length,
    generation: 'pinned',
    sets: 1,
    feasible: outcome.ok ? 1 : 0,
    dropped: outcome.e.dropped ? { [outcome.e.dropped.kind]: 1 } : {},
  };
  const notes = candidateNotes(
    index,
    [outcome.e],
    artifactBytesToMove(ctx.request.workload.artifactBytes, ctx.cached),
    'pinned by the request',
  );
  const explanation = { ...base, sizes: [note], candidates: notes.notes, candidatesOmitted: notes.omitted };
  if (!outcome.ok) return { refusal: { kind: outcome.kind, message: outcome.message, explanation } };
  return buildPlan(ctx, outcome.e, explanation, options, undefined, 'pinned');
}

/**
 * The 2-core of the hop graph over `eligible`: repeatedly drop nodes with fewer than two usable hops. A ring of
 * three or more nodes lies inside it, so sets of that size are drawn from it only.
 */
function twoCore(index: ClusterIndex, eligible: readonly number[]): number[] {
  const n = index.n;
  const inCore = new Uint8Array(n);
  for (const v of eligible) inCore[v] = 1;
  const degree = new Int32Array(n);
  for (const v of eligible)
    for (const u of eligible)
      if (u !== v && (index.hop[v * n + u] as number) !== Number.NEGATIVE_INFINITY)
        degree[v] = (degree[v] as number) + 1;
  // Peel nodes with fewer than two hops, lowering their neighbours' degrees (each node is peeled once).
  const queue = eligible.filter((v) => (degree[v] as number) < 2);
  for (const v of queue) inCore[v] = 0;
  while (queue.length > 0) {
    const v = queue.pop() as number;
    for (const u of eligible) {
      if (inCore[u] === 0 || (index.hop[v * n + u] as number) === Number.NEGATIVE_INFINITY) continue;
      degree[u] = (degree[u] as number) - 1;
      if ((degree[u] as number) < 2) {
        inCore[u] = 0;
        queue.push(u);
      }
    }
  }
  return eligible.filter((v) => inCore[v] === 1);
}

/** A size no set can satisfy, known without generating sets: tensor divisibility, ring core, or too little memory. */
function skipSize(ctx: PlanningContext, k: number): string | undefined {
  const w = ctx.request.workload;
  if (ctx.request.sharding === 'tensor' && k > 1) {
    const problem = tensorSizeProblem(ctx.request, k);
    if (problem) return problem;
  }
  const pool = k >= 3 ? ctx.ringCore : ctx.eligible;
  if (k >= 3) {
    const outside = ctx.required.filter((r) => !pool.includes(r)).map((r) => ctx.index.ids[r]);
    if (outside.length > 0)
      return `ring: required node ${outside.join(', ')} has usable links to fewer than two nodes that could share a ring`;
    if (pool.length < k)
      return `ring: only ${pool.length} node(s) have usable links to two or more others that could share a ring`;
  }
  const others = pool
    .filter((i) => !ctx.required.includes(i))
    .map((i) => ctx.memory[i] as number)
    .sort((a, b) => b - a);
  const most =
    ctx.required.reduce((s, i) => s + (ctx.memory[i] as number), 0) +
    others.slice(0, k - ctx.required.length).reduce((s, m) => s + m, 0);
  if (most < w.memoryBytes)
    return `not enough memory: any ${k} nodes have at most ${formatBytes(most)} available, ${formatBytes(w.memoryBytes)} needed`;
  return undefined;
}

/** `fixed`: the order was given (pinned) or kept from the instance (kept-stages.ts), not searched. */
function buildPlan(
  ctx: PlanningContext,
  winner: Evaluated,
  explanation: Explanation,
  options: PlanOptions,
  byPrediction?: PredictionOutcome,
  fixed?: 'pinned' | 'kept-stages',
): Plan {
  const pinned = fixed !== undefined;
  const { index, request } = ctx;
  const order = winner.order as readonly number[];
  const k = order.length;
  const names = order.map((m) => index.ids[m] as string);
  const single = k === 1;
  const sharding = single ? 'pipeline' : request.sharding;
  const backend = single ? 'ring' : request.backend;
  // A separate stream for port and id, so they do not depend on how many draws the search made.
  const idRng = createRng((options.seed ^ 0x2545f491) >>> 0);
  const portRange = options.portRange ?? DEFAULT_INSTANCE_PORTS;
  const port = chooseInstancePort(idRng, portRange, options.reservedPorts ?? DEFAULT_RESERVED_PORTS);
  if (port === undefined)
    throw new ValidationError(
      'config',
      'instancePorts',
      `no port of ${portRange.min}-${portRange.max} is left once the reserved ones are taken out: widen the range`,
    );
  const id = rngUuid(idRng);
  const layers = request.workload.layers;
  const perNode = new Map<number, number>();
  winner.members.forEach((m, i) => perNode.set(m, winner.split?.[i] ?? layers));
  // A model's pipeline: its split follows the final order (the first and last stage weigh more).
  const stages = request.workload.modelBytes && sharding === 'pipeline' ? modelStages(ctx, order) : undefined;
  if (stages && 'short' in stages) throw new Error(`buildPlan: the chosen order does not fit (${stages.short})`);
  if (stages) order.forEach((m, r) => perNode.set(m, stages.layers[r] as number));
  let start = 0;
  const shards: Shard[] = order.map((m, rank) => {
    if (sharding === 'tensor')
      return { node: index.ids[m] as string, rank, worldSize: k, startLayer: 0, endLayer: layers };
    const count = perNode.get(m) as number;
    const shard = { node: index.ids[m] as string, rank, worldSize: k, startLayer: start, endLayer: start + count };
    start += count;
    return shard;
  });
  const instance: { -readonly [K in keyof Instance]: Instance[K] } = {
    id,
    backend,
    sharding,
    nodes: names,
    shards,
    port,
  };
  let coordinator: Explanation['coordinator'];
  if (backend === 'ring') {
    instance.hostsByNode = ringHostsByNode(
      names,
      port,
      (from, to) =>
        index.ringChoice[(index.indexOf.get(from) as number) * index.n + (index.indexOf.get(to) as number)]?.ip ?? '',
    );
  } else {
    const matrix = jacclDevicesMatrix(index, order);
    const routes = coordinatorRoutes(index, order, order[0] as number);
    if (matrix.ok && routes.ok) {
      instance.jacclDevices = matrix.matrix;
      instance.jacclCoordinators = jacclCoordinators(index, order, order[0] as number, routes.routes, port);
      const routeNotes: Record<string, HopDirection> = {};
      for (const [m, choice] of routes.routes)
        routeNotes[index.ids[m] as string] = hopDirection(choice) as HopDirection;
      coordinator = { node: names[0] as string, routes: routeNotes };
    }
  }
  // torch (Gloo/NCCL) connects every pair of ranks: the address each node is reached at by all the others.
  const hosts = instance.hostsByNode;
  const mesh = meshAddresses(index, order, (m) => {
    const rank = order.indexOf(m);
    return hosts
      ? [names[(rank + 1) % k], names[(rank - 1 + k) % k]].map((nb) => hosts[nb as string]?.[rank]?.ip ?? '')
      : [];
  });
  if (Object.keys(mesh).length > 0) instance.meshAddresses = mesh;
  const ring = winner.ring;
  const hops = explainHops(index, order);
  const predicted = predictOption(ctx, winner, order);
  const why = pinned
    ? pinnedWhy(ctx, winner, names, predicted)
    : byPrediction
      ? predictionWhy(ctx, byPrediction, winner)
      : chosenWhy(ctx, winner, explanation.sizes, index);
  if (!byPrediction && !pinned && predicted.unmeasured.length > 0)
    why.push(`no complete prediction, chosen by preference: unmeasured ${predicted.unmeasured.join(', ')}`);
  if (stages)
    why.push(
      `model stages by bytes: ${shards.map((s, r) => `${s.node} layers ${s.startLayer}-${s.endLayer - 1} (${formatBytes(stages.bytes[r] as number)})`).join(', ')}`,
    );
  const runnerUp = byPrediction?.runnerUp;
  const forced =
    single && (request.sharding !== 'pipeline' || request.backend !== 'ring')
      ? 'single node: forced to pipeline sharding on the ring backend'
      : undefined;
  return {
    instance,
    predicted,
    explanation: {
      ...explanation,
      chosen: {
        nodes: names,
        why,
        hasLeaf: winner.hasLeaf,
        cachedScore: winner.cached,
        availableMemoryBytes: winner.memory,
        slowestHopBps: ring && k > 1 ? (scoreBandwidth(ring.bottleneck) ?? null) : null,
        rttSumMs: Math.round((ring?.rttSum ?? 0) * 1e6) / 1e6,
        search: ring
          ? `${ring.method}${ring.thresholdsTried > 0 ? ` (${ring.thresholdsTried} thresholds tried)` : ''}`
          : 'none',
        ...(forced ? { forced } : {}),
        ...(request.workload.artifactBytes !== undefined
          ? { bytesToMove: artifactBytesToMove(request.workload.artifactBytes, ctx.cached)!(winner.members) }
          : {}),
        by: fixed ?? (byPrediction ? 'prediction' : 'preference'),
        ...(byPrediction ? { optionsCompared: byPrediction.compared } : {}),
        ...(runnerUp
          ? {
              runnerUp: {
                nodes: (runnerUp.e.order ?? runnerUp.e.members).map((m) => index.ids[m] as string),
                predicted: runnerUp.prediction,
              },
            }
          : {}),
      },
      hops,
      predictedAllReduce1GiB: predictAllReduce(hops, k),
      ...(coordinator ? { coordinator } : {}),
    },
  };
}
