import { findHamiltonianCycle } from './hamiltonian.js';
import type { Rng } from './rng.js';

/**
 * Ring order search: among the Hamiltonian cycles of a node set, find the one whose slowest hop is fastest
 * (bottleneck objective), then the lowest RTT sum. Never enumerates cycles:
 * - up to EXACT_MAX_NODES nodes, two exact subset DPs (max bottleneck, then min RTT among cycles reaching it);
 * - above, a threshold search over the distinct hop scores: the highest threshold whose thresholded graph still
 *   has a Hamiltonian cycle (found with a bounded Pósa heuristic), then 2-opt moves that lower the RTT sum
 *   without letting any hop fall below the threshold.
 * Inputs are k×k symmetric matrices: `hop` scores (-Infinity = not a usable hop) and `rtt`.
 */
export const EXACT_MAX_NODES = 12;

export interface RingSearchResult {
  /** Positions into the member list, starting at 0, orientation fixed (order[1] < order[k-1]). */
  readonly order: readonly number[];
  /** Score of the slowest hop (Infinity for a single node). */
  readonly bottleneck: number;
  readonly rttSum: number;
  /** `pinned`: the caller's order, not searched (pinned-placement.ts). */
  readonly method: 'single' | 'pair' | 'exact' | 'heuristic' | 'pinned';
  /** Thresholds tested by the heuristic (0 for the exact methods). */
  readonly thresholdsTried: number;
}

/** Cheap upper bound on any cycle's bottleneck: every node uses two of its hops. */
export function bottleneckUpperBound(k: number, hop: Float64Array): number {
  if (k === 1) return Number.POSITIVE_INFINITY;
  if (k === 2) return hop[1] as number;
  let bound = Number.POSITIVE_INFINITY;
  for (let v = 0; v < k; v++) {
    let first = Number.NEGATIVE_INFINITY,
      second = Number.NEGATIVE_INFINITY;
    for (let u = 0; u < k; u++) {
      if (u === v) continue;
      const s = hop[v * k + u] as number;
      if (s > first) {
        second = first;
        first = s;
      } else if (s > second) second = s;
    }
    if (second < bound) bound = second;
  }
  return bound;
}

export function searchRing(k: number, hop: Float64Array, rtt: Float64Array, rng: Rng): RingSearchResult | undefined {
  if (k === 1)
    return { order: [0], bottleneck: Number.POSITIVE_INFINITY, rttSum: 0, method: 'single', thresholdsTried: 0 };
  if (k === 2) {
    const s = hop[1] as number;
    return s === Number.NEGATIVE_INFINITY
      ? undefined
      : { order: [0, 1], bottleneck: s, rttSum: 2 * (rtt[1] as number), method: 'pair', thresholdsTried: 0 };
  }
  if (bottleneckUpperBound(k, hop) === Number.NEGATIVE_INFINITY) return undefined;
  return k <= EXACT_MAX_NODES ? exactSearch(k, hop, rtt) : heuristicSearch(k, hop, rtt, rng);
}

export function cycleStats(
  order: readonly number[],
  k: number,
  hop: Float64Array,
  rtt: Float64Array,
): { bottleneck: number; rttSum: number } {
  let bottleneck = Number.POSITIVE_INFINITY,
    rttSum = 0;
  for (let i = 0; i < order.length; i++) {
    const a = order[i] as number,
      b = order[(i + 1) % order.length] as number;
    bottleneck = Math.min(bottleneck, hop[a * k + b] as number);
    rttSum += rtt[a * k + b] as number;
  }
  return { bottleneck, rttSum };
}

/** Rotate to start at 0 and pick the orientation with the smaller second element, so equal rings print alike. */
export function canonicalOrder(order: readonly number[]): number[] {
  const i = order.indexOf(0);
  const rotated = [...order.slice(i), ...order.slice(0, i)];
  if (rotated.length > 2 && (rotated[1] as number) > (rotated[rotated.length - 1] as number)) {
    return [0, ...rotated.slice(1).reverse()];
  }
  return rotated;
}

/** Exact two-phase subset DP (exported for tests; searchRing uses it up to EXACT_MAX_NODES). */
export function exactSearch(k: number, hop: Float64Array, rtt: Float64Array): RingSearchResult | undefined {
  const full = (1 << k) - 1;
  // Phase 1: best[mask*k+v] = highest bottleneck of a path 0 → v visiting exactly mask.
  const best = new Float64Array((full + 1) * k).fill(Number.NEGATIVE_INFINITY);
  best[1 * k + 0] = Number.POSITIVE_INFINITY;
  for (let mask = 1; mask <= full; mask += 2) {
    for (let v = 0; v < k; v++) {
      const cur = best[mask * k + v] as number;
      if (cur === Number.NEGATIVE_INFINITY) continue;
      for (let u = 1; u < k; u++) {
        if (mask & (1 << u)) continue;
        const s = hop[v * k + u] as number;
        if (s === Number.NEGATIVE_INFINITY) continue;
        const val = cur < s ? cur : s;
        const idx = (mask | (1 << u)) * k + u;
        if (val > (best[idx] as number)) best[idx] = val;
      }
    }
  }
  let bottleneck = Number.NEGATIVE_INFINITY;
  for (let v = 1; v < k; v++)
    bottleneck = Math.max(bottleneck, Math.min(best[full * k + v] as number, hop[v * k] as number));
  if (bottleneck === Number.NEGATIVE_INFINITY) return undefined;
  // Phase 2: least RTT sum among paths using only hops >= bottleneck, with parents to rebuild the cycle.
  const cost = new Float64Array((full + 1) * k).fill(Number.POSITIVE_INFINITY);
  const parent = new Int8Array((full + 1) * k).fill(-1);
  cost[1 * k + 0] = 0;
  for (let mask = 1; mask <= full; mask += 2) {
    for (let v = 0; v < k; v++) {
      const cur = cost[mask * k + v] as number;
      if (cur === Number.POSITIVE_INFINITY) continue;
      for (let u = 1; u < k; u++) {
        if (mask & (1 << u) || (hop[v * k + u] as number) < bottleneck) continue;
        const val = cur + (rtt[v * k + u] as number);
        const idx = (mask | (1 << u)) * k + u;
        if (val < (cost[idx] as number)) {
          cost[idx] = val;
          parent[idx] = v;
        }
      }
    }
  }
  let last = -1,
    total = Number.POSITIVE_INFINITY;
  for (let v = 1; v < k; v++) {
    if ((hop[v * k] as number) < bottleneck) continue;
    const val = (cost[full * k + v] as number) + (rtt[v * k] as number);
    if (val < total) {
      total = val;
      last = v;
    }
  }
  const order: number[] = [];
  let mask = full,
    v = last;
  while (v !== -1) {
    order.push(v);
    const p = parent[mask * k + v] as number;
    mask &= ~(1 << v);
    v = p;
    if (mask === 1) {
      order.push(0);
      break;
    }
  }
  order.reverse();
  return { order: canonicalOrder(order), bottleneck, rttSum: total, method: 'exact', thresholdsTried: 0 };
}

/** Threshold search + Pósa + 2-opt (exported for tests; searchRing uses it above EXACT_MAX_NODES). */
export function heuristicSearch(
  k: number,
  hop: Float64Array,
  rtt: Float64Array,
  rng: Rng,
): RingSearchResult | undefined {
  const upper = bottleneckUpperBound(k, hop);
  const values = [...new Set(Array.from(hop).filter((s) => s !== Number.NEGATIVE_INFINITY && s <= upper))].sort(
    (a, b) => a - b,
  );
  const maxSteps = 30 * k * k + 2000;
  let tried = 0;
  const attempt = (threshold: number): number[] | undefined => {
    tried++;
    const adj: number[][] = [];
    for (let v = 0; v < k; v++) {
      const list: number[] = [];
      for (let u = 0; u < k; u++) if (u !== v && (hop[v * k + u] as number) >= threshold) list.push(u);
      adj.push(list);
    }
    return findHamiltonianCycle(adj, rng, maxSteps);
  };
  // Optimistic first: dense graphs usually reach the upper bound. Otherwise binary search between the lowest
  // threshold (all hops) and the bound, keeping the best cycle found; a found cycle's real bottleneck may
  // already exceed the threshold tested, which moves the lower end further.
  let lo = 0,
    hi = values.length - 1;
  let cycle = attempt(values[hi] as number);
  if (cycle) lo = hi;
  else {
    cycle = attempt(values[0] as number);
    if (!cycle) return undefined;
    lo = values.indexOf(cycleStats(cycle, k, hop, rtt).bottleneck);
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      const found = attempt(values[mid] as number);
      if (found) {
        cycle = found;
        lo = values.indexOf(cycleStats(found, k, hop, rtt).bottleneck);
      } else hi = mid;
    }
  }
  const threshold = values[lo] as number;
  const improved = twoOpt(cycle, k, hop, rtt, threshold);
  const stats = cycleStats(improved, k, hop, rtt);
  return {
    order: canonicalOrder(improved),
    bottleneck: stats.bottleneck,
    rttSum: stats.rttSum,
    method: 'heuristic',
    thresholdsTried: tried,
  };
}

/** 2-opt: reverse a segment when that lowers the RTT sum and both new hops stay at or above the threshold. */
function twoOpt(cycle: number[], k: number, hop: Float64Array, rtt: Float64Array, threshold: number): number[] {
  const c = [...cycle];
  const n = c.length;
  for (let pass = 0; pass < 8; pass++) {
    let changed = false;
    for (let i = 0; i < n - 2; i++) {
      for (let j = i + 2; j < n; j++) {
        if (i === 0 && j === n - 1) continue;
        const a = c[i] as number,
          b = c[i + 1] as number,
          x = c[j] as number,
          y = c[(j + 1) % n] as number;
        if ((hop[a * k + x] as number) < threshold || (hop[b * k + y] as number) < threshold) continue;
        const delta =
          (rtt[a * k + x] as number) +
          (rtt[b * k + y] as number) -
          (rtt[a * k + b] as number) -
          (rtt[x * k + y] as number);
        if (delta < -1e-12) {
          for (let l = i + 1, r = j; l < r; l++, r--) {
            const t = c[l] as number;
            c[l] = c[r] as number;
            c[r] = t;
          }
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
  return c;
}
