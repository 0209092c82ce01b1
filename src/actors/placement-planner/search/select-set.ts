import { candidateSets } from './candidate-sets.js';
import { subMatrices, type ClusterIndex } from './cluster-index.js';
import { formatBytes, formatScore } from './format.js';
import { coordinatorRoutes, jacclDevicesMatrix } from './jaccl.js';
import { findShareShortfall, splitLayersByBytes, splitLayersByMemory } from './layer-split.js';
import { stageBytes, weightBytes } from './model-workload.js';
import type { PlacementRequest } from './placement-request.js';
import type { DropKind, SizeNote } from './plan-result.js';
import { bottleneckUpperBound, searchRing, type RingSearchResult } from './ring-order.js';
import type { Rng } from './rng.js';

/**
 * Evaluation of the node sets of one size, in the preference order: a set containing a leaf, then more of the
 * workload cached, then the best network (highest slowest hop, then lowest RTT sum), then more memory, then node
 * id order. Sets are grouped in tiers of equal (leaf, cached); the first tier holding a set that can form a ring
 * wins and later tiers are never searched. Inside a tier, a set whose bottleneck upper bound is below the best
 * ring found so far is dropped without a search.
 */
export interface PlanningContext {
  readonly index: ClusterIndex;
  readonly request: PlacementRequest;
  readonly eligible: readonly number[];
  /** The eligible nodes that can be in a ring of three or more (the hop graph's 2-core). */
  readonly ringCore: readonly number[];
  readonly required: readonly number[];
  readonly memory: readonly number[];
  readonly cached: readonly number[];
  readonly rng: Rng;
  /** Layers per pipeline position, given rather than split (a re-placement that keeps its stages, kept-stages.ts). */
  readonly fixedLayers?: readonly number[];
}

export interface Evaluated {
  readonly members: readonly number[];
  readonly memory: number;
  readonly hasLeaf: boolean;
  readonly cached: number;
  /** Layers per member (member order, i.e. node id order), pipeline only. */
  split?: readonly number[];
  ring?: RingSearchResult;
  /** Ring order as global indices, rank 0 first. */
  order?: readonly number[];
  chosen?: boolean;
  dropped?: { kind: DropKind; why: string };
  notEvaluated?: string;
}

export interface SizeOutcome {
  readonly note: SizeNote;
  readonly evaluated: readonly Evaluated[];
  readonly winner?: Evaluated;
}

const round9 = (x: number): number => Math.round(x * 1e9) / 1e9;

export function evaluateSize(ctx: PlanningContext, k: number): SizeOutcome {
  const family = candidateSets(k >= 3 ? { ...ctx, eligible: ctx.ringCore } : ctx, k);
  const evaluated = family.sets.map((members) => cheapChecks(ctx, k, members));
  const winner = searchTiers(
    ctx,
    k,
    evaluated.filter((e) => !e.dropped),
  );
  const dropped: Partial<Record<DropKind, number>> = {};
  for (const e of evaluated) if (e.dropped) dropped[e.dropped.kind] = (dropped[e.dropped.kind] ?? 0) + 1;
  const feasible = evaluated.filter((e) => e.order !== undefined).length;
  const note: SizeNote = {
    size: k,
    generation: family.exhaustive ? 'exhaustive' : 'greedy',
    sets: evaluated.length,
    feasible,
    dropped,
  };
  return winner ? { note, evaluated, winner } : { note, evaluated };
}

/** Why tensor sharding cannot split this workload over `k` nodes (hidden size or kv heads not divisible), if it cannot. */
export function tensorSizeProblem(request: PlacementRequest, k: number): string | undefined {
  const w = request.workload;
  if ((w.hiddenSize as number) % k !== 0)
    return `tensor sharding: hidden size ${w.hiddenSize} is not divisible by ${k}`;
  if (w.kvHeads !== undefined && w.kvHeads % k !== 0)
    return `tensor sharding: kv heads ${w.kvHeads} is not divisible by ${k}`;
  return undefined;
}

/** Memory, layer and RDMA checks that need no ring search. */
export function cheapChecks(ctx: PlanningContext, k: number, members: readonly number[]): Evaluated {
  const { index, request } = ctx;
  const memory = members.reduce((s, m) => s + (ctx.memory[m] as number), 0);
  const e: Evaluated = {
    members,
    memory,
    hasLeaf: members.some((m) => index.leaf[m]),
    cached: round9(members.reduce((s, m) => s + (ctx.cached[m] as number), 0)),
  };
  const need = request.workload.memoryBytes;
  if (memory < need) {
    e.dropped = {
      kind: 'memory',
      why: `not enough memory: ${formatBytes(memory)} available, ${formatBytes(need)} needed`,
    };
    return e;
  }
  if (request.sharding === 'pipeline' || k === 1) {
    const layers = request.workload.layers;
    if (layers < k) {
      e.dropped = { kind: 'layers', why: `${layers} layers cannot give each of ${k} nodes one` };
      return e;
    }
    // A model's stages weigh differently by position (the first carries the embeddings, the last the head):
    // its split and memory check wait for the ring order (orderSet).
    if (!request.workload.modelBytes) {
      const available = members.map((m) => ctx.memory[m] as number);
      const split = splitLayersByMemory(layers, available);
      const short = findShareShortfall(need, layers, split, available);
      if (short) {
        const node = index.ids[members[short.position] as number];
        e.dropped = {
          kind: 'memory',
          why: `not enough memory on ${node}: its ${short.layers} layers need ${formatBytes(short.requiredBytes)}, ${formatBytes(short.availableBytes)} available`,
        };
        return e;
      }
      e.split = split;
    }
  }
  if (request.backend === 'jaccl' && k > 1) {
    const off = members.find((m) => !index.nodes[m]?.rdmaEnabled);
    if (off !== undefined) {
      e.dropped = { kind: 'rdma', why: `jaccl needs RDMA enabled on every node: not on ${index.ids[off]}` };
      return e;
    }
    const matrix = jacclDevicesMatrix(index, members);
    if (!matrix.ok)
      e.dropped = { kind: 'rdma', why: `jaccl needs all-to-all RDMA: no RDMA link ${matrix.from} → ${matrix.to}` };
  }
  return e;
}

interface Item {
  readonly e: Evaluated;
  readonly hop: Float64Array;
  readonly rtt: Float64Array;
  readonly bound: number;
}

const tierKey = (e: Evaluated): string => `${e.hasLeaf ? 1 : 0}|${e.cached}`;
const lexCompare = (a: readonly number[], b: readonly number[]): number => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
};

/** Negative when `a` is the better finished candidate (same tier). */
function compareFinished(a: Evaluated, b: Evaluated): number {
  const ra = a.ring as RingSearchResult,
    rb = b.ring as RingSearchResult;
  if (ra.bottleneck !== rb.bottleneck) return rb.bottleneck - ra.bottleneck;
  const da = round9(ra.rttSum),
    db = round9(rb.rttSum);
  if (da !== db) return da - db;
  if (a.memory !== b.memory) return b.memory - a.memory;
  return lexCompare(a.members, b.members);
}

function searchTiers(ctx: PlanningContext, k: number, alive: readonly Evaluated[]): Evaluated | undefined {
  const { index } = ctx;
  const items: Item[] = alive.map((e) => {
    const m = subMatrices(index, e.members);
    return { e, hop: m.hop, rtt: m.rtt, bound: bottleneckUpperBound(k, m.hop) };
  });
  items.sort(
    (a, b) =>
      Number(b.e.hasLeaf) - Number(a.e.hasLeaf) ||
      b.e.cached - a.e.cached ||
      b.bound - a.bound ||
      b.e.memory - a.e.memory ||
      lexCompare(a.e.members, b.e.members),
  );
  let best: Evaluated | undefined;
  const finished: Evaluated[] = [];
  for (const item of items) {
    const e = item.e;
    if (best && tierKey(e) !== tierKey(best)) {
      e.notEvaluated =
        best.hasLeaf && !e.hasLeaf
          ? 'lower preference: contains no leaf node'
          : 'lower preference: less of the workload cached';
      continue;
    }
    const bestRing = best?.ring;
    if (bestRing && item.bound < bestRing.bottleneck) {
      e.dropped = {
        kind: 'network',
        why: `slower network: its slowest hop can be at most ${formatScore(item.bound)}, the chosen ring's is ${formatScore(bestRing.bottleneck)}`,
      };
      continue;
    }
    if (!orderSet(ctx, k, e, item.hop, item.rtt, item.bound)) continue;
    finished.push(e);
    if (!best || compareFinished(e, best) < 0) best = e;
  }
  if (!best) return undefined;
  best.chosen = true;
  for (const e of finished) if (e !== best) e.dropped = whyWorse(e, best);
  return best;
}

/**
 * Searches a ring order for `e` (rank 0 first; jaccl: rotated so rank 0 is a coordinator every member reaches).
 * Sets `e.ring` and `e.order`, or `e.dropped`; true when an order was found.
 */
export function orderSet(
  ctx: PlanningContext,
  k: number,
  e: Evaluated,
  hop: Float64Array,
  rtt: Float64Array,
  bound: number,
): boolean {
  const { index } = ctx;
  const ring = searchRing(k, hop, rtt, ctx.rng);
  if (!ring) {
    e.dropped = {
      kind: 'ring',
      why:
        k <= 12 || bound === Number.NEGATIVE_INFINITY
          ? 'no order gives every node a link to both ring neighbours'
          : 'no ring order found within the search budget',
    };
    return false;
  }
  let order = ring.order.map((p) => e.members[p] as number);
  if (ctx.request.backend === 'jaccl' && k > 1) {
    // Rank 0 is the coordinator: the first node in ring order that every other member can reach by socket.
    const at = order.findIndex((c) => coordinatorRoutes(index, e.members, c).ok);
    if (at === -1) {
      e.dropped = {
        kind: 'coordinator',
        why: 'jaccl needs a coordinator every node can reach by a socket link: no member qualifies',
      };
      return false;
    }
    order = [...order.slice(at), ...order.slice(0, at)];
  }
  if (ctx.request.workload.modelBytes && (ctx.request.sharding === 'pipeline' || k === 1)) {
    const stages = modelStages(ctx, order);
    if ('short' in stages) {
      e.dropped = { kind: 'memory', why: stages.short };
      return false;
    }
    e.split = e.members.map((m) => stages.layers[order.indexOf(m)] as number);
  }
  e.ring = ring;
  e.order = order;
  return true;
}

export interface ModelStages {
  /** layers per stage, pipeline order */
  readonly layers: readonly number[];
  /** bytes of each stage's tensors (model-workload.ts stageBytes), pipeline order */
  readonly bytes: readonly number[];
}

/**
 * A model workload's stages for nodes in pipeline `order` (docs/placement.md, "A model workload"): the layers
 * split by bytes in proportion to memory, each stage's tensors weighed, and each checked against its node's
 * memory (the stage's share of memoryBytes: its bytes, scaled up when memoryBytes is more than the weights).
 */
export function modelStages(ctx: PlanningContext, order: readonly number[]): ModelStages | { short: string } {
  const w = ctx.request.workload;
  const mb = w.modelBytes;
  if (!mb) throw new Error('modelStages: not a model workload');
  const available = order.map((m) => ctx.memory[m] as number);
  const fixed = ctx.fixedLayers?.length === order.length ? ctx.fixedLayers : undefined;
  const layers =
    fixed ??
    splitLayersByBytes(
      {
        layerBytes: mb.layerBytes,
        leading: mb.embed,
        trailing: mb.norm + mb.head + (mb.tiedEmbeddings ? mb.embed : 0),
      },
      available,
    );
  const weights = weightBytes(mb);
  const bytes: number[] = [];
  let from = 0;
  for (let i = 0; i < order.length; i++) {
    const count = layers[i] as number;
    const b = stageBytes(mb, from, from + count);
    const need = Math.ceil((b * w.memoryBytes) / weights);
    if (need > (available[i] as number))
      return {
        short: `not enough memory on ${ctx.index.ids[order[i] as number]}: its stage (layers ${from}-${from + count - 1}, ${formatBytes(b)} of tensors) needs ${formatBytes(need)}, ${formatBytes(available[i] as number)} available`,
      };
    bytes.push(b);
    from += count;
  }
  return { layers, bytes };
}

function whyWorse(e: Evaluated, best: Evaluated): { kind: DropKind; why: string } {
  const r = e.ring as RingSearchResult,
    b = best.ring as RingSearchResult;
  if (r.bottleneck !== b.bottleneck)
    return {
      kind: 'network',
      why: `slower network: slowest hop ${formatScore(r.bottleneck)}, the chosen ring's is ${formatScore(b.bottleneck)}`,
    };
  if (round9(r.rttSum) !== round9(b.rttSum))
    return {
      kind: 'network',
      why: `same slowest hop, higher RTT sum (${round9(r.rttSum)} ms against ${round9(b.rttSum)} ms)`,
    };
  if (e.memory !== best.memory)
    return { kind: 'preference', why: `same network, less memory (${formatBytes(e.memory)})` };
  return { kind: 'preference', why: 'equal on every preference; later in node id order' };
}
