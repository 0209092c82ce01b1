import type { ClusterIndex } from './cluster-index.js';

/**
 * Which node sets of one size to consider. Exhaustive when the number of sets times the ring-search cost per set
 * stays within a work budget (so small clusters get exo's full answer); otherwise a bounded greedy family:
 * - the sets with the most memory and the most cached data (required nodes always in),
 * - for every eligible seed node, a set grown from {required ∪ seed} by repeatedly adding the node with the best
 *   hop into the set (ties: more memory, then id order).
 * The family always contains the max-memory set, so a size is never skipped for memory when some set has it.
 */
export const EXHAUSTIVE_MAX_SETS = 5000;
export const EXHAUSTIVE_WORK_BUDGET = 2e7;

export interface CandidateInputs {
  readonly index: ClusterIndex;
  /** Global indices of nodes that may be in a set (have a memory figure, backend needs met), ascending. */
  readonly eligible: readonly number[];
  /** Global indices that every set must contain, ascending. */
  readonly required: readonly number[];
  readonly memory: readonly number[];
  readonly cached: readonly number[];
}

export interface CandidateFamily {
  readonly sets: number[][];
  readonly exhaustive: boolean;
}

/** Estimated ring-search cost of one set of size k (exact DP up to 12 nodes, heuristic above). */
export function searchCost(k: number): number {
  return k <= 12 ? (1 << k) * k * k : 30 * k * k * k;
}

/** C(n, r), saturating at `cap` + 1 so huge counts stay cheap to compute. */
export function binomialCapped(n: number, r: number, cap: number): number {
  if (r < 0 || r > n) return 0;
  let c = 1;
  for (let i = 1; i <= Math.min(r, n - r); i++) {
    c = (c * (n - Math.min(r, n - r) + i)) / i;
    if (c > cap) return cap + 1;
  }
  return Math.round(c);
}

export function candidateSets(input: CandidateInputs, k: number): CandidateFamily {
  const { eligible, required } = input;
  const others = eligible.filter((v) => !required.includes(v));
  const need = k - required.length;
  if (need < 0 || need > others.length) return { sets: [], exhaustive: true };
  const count = binomialCapped(others.length, need, EXHAUSTIVE_MAX_SETS);
  if (count <= EXHAUSTIVE_MAX_SETS && count * searchCost(k) <= EXHAUSTIVE_WORK_BUDGET) {
    return { sets: combinations(others, need).map((c) => [...required, ...c].sort((a, b) => a - b)), exhaustive: true };
  }
  return { sets: greedyFamily(input, others, need), exhaustive: false };
}

function combinations(items: readonly number[], r: number): number[][] {
  const out: number[][] = [];
  const pick: number[] = [];
  const walk = (start: number): void => {
    if (pick.length === r) {
      out.push([...pick]);
      return;
    }
    for (let i = start; i <= items.length - (r - pick.length); i++) {
      pick.push(items[i] as number);
      walk(i + 1);
      pick.pop();
    }
  };
  walk(0);
  return out;
}

function greedyFamily(input: CandidateInputs, others: readonly number[], need: number): number[][] {
  const { index, required, memory, cached } = input;
  const seen = new Set<string>();
  const family: number[][] = [];
  const add = (set: number[]): void => {
    const sorted = [...set].sort((a, b) => a - b);
    const key = sorted.join(',');
    if (!seen.has(key)) {
      seen.add(key);
      family.push(sorted);
    }
  };
  const byMemory = [...others].sort((a, b) => (memory[b] as number) - (memory[a] as number) || a - b);
  add([...required, ...byMemory.slice(0, need)]);
  const byCache = [...others].sort(
    (a, b) => (cached[b] as number) - (cached[a] as number) || (memory[b] as number) - (memory[a] as number) || a - b,
  );
  add([...required, ...byCache.slice(0, need)]);
  const seeds = required.length > 0 && need === 0 ? [-1] : others;
  for (const seed of seeds) {
    const start = seed === -1 ? [...required] : [...required, seed];
    if (start.length > required.length + need) continue;
    add(growByNetwork(index, start, others, required.length + need, memory));
  }
  return family;
}

/** Grow `start` to `size` nodes, each time adding the outside node with the best hop into the set. */
function growByNetwork(
  index: ClusterIndex,
  start: readonly number[],
  pool: readonly number[],
  size: number,
  memory: readonly number[],
): number[] {
  const n = index.n;
  const set = [...start];
  const inSet = new Uint8Array(n);
  for (const s of set) inSet[s] = 1;
  const outside = pool.filter((x) => inSet[x] === 0);
  const best = new Float64Array(outside.length).fill(Number.NEGATIVE_INFINITY);
  outside.forEach((x, i) => {
    for (const s of set) best[i] = Math.max(best[i] as number, index.hop[x * n + s] as number);
  });
  const taken = new Uint8Array(outside.length);
  while (set.length < size) {
    let pick = -1;
    for (let i = 0; i < outside.length; i++) {
      if (taken[i]) continue;
      if (pick === -1) {
        pick = i;
        continue;
      }
      const b = best[i] as number,
        pb = best[pick] as number;
      const x = outside[i] as number,
        px = outside[pick] as number;
      if (
        b > pb ||
        (b === pb &&
          ((memory[x] as number) > (memory[px] as number) ||
            ((memory[x] as number) === (memory[px] as number) && x < px)))
      )
        pick = i;
    }
    if (pick === -1) break;
    taken[pick] = 1;
    const added = outside[pick] as number;
    set.push(added);
    for (let i = 0; i < outside.length; i++) {
      if (!taken[i]) best[i] = Math.max(best[i] as number, index.hop[(outside[i] as number) * n + added] as number);
    }
  }
  return set;
}
