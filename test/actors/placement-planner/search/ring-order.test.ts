import t from 'tap';
import { findHamiltonianCycle } from '../../../../src/actors/placement-planner/search/hamiltonian.js';
import {
  cycleStats,
  exactSearch,
  heuristicSearch,
  searchRing,
} from '../../../../src/actors/placement-planner/search/ring-order.js';
import { createRng } from '../../../../src/actors/placement-planner/search/rng.js';

const NONE = Number.NEGATIVE_INFINITY;

function randomProblem(k: number, seed: number, density: number): { hop: Float64Array; rtt: Float64Array } {
  const rng = createRng(seed);
  const hop = new Float64Array(k * k).fill(NONE);
  const rtt = new Float64Array(k * k);
  for (let a = 0; a < k; a++) {
    for (let b = a + 1; b < k; b++) {
      if (rng.next() > density) continue;
      const s = 16 + rng.int(1, 6) * 1e9; // few distinct values: ties exercise the RTT tie-break
      const r = rng.int(1, 50) / 10;
      hop[a * k + b] = hop[b * k + a] = s;
      rtt[a * k + b] = rtt[b * k + a] = r;
    }
  }
  return { hop, rtt };
}

/** Every Hamiltonian cycle through 0, by permutations: the reference the fast searches must match. */
function bruteForce(
  k: number,
  hop: Float64Array,
  rtt: Float64Array,
): { bottleneck: number; rttSum: number } | undefined {
  let best: { bottleneck: number; rttSum: number } | undefined;
  const rest = Array.from({ length: k - 1 }, (_, i) => i + 1);
  const permute = (prefix: number[], left: number[]): void => {
    if (left.length === 0) {
      const s = cycleStats([0, ...prefix], k, hop, rtt);
      if (s.bottleneck === NONE) return;
      if (
        !best ||
        s.bottleneck > best.bottleneck ||
        (s.bottleneck === best.bottleneck && s.rttSum < best.rttSum - 1e-9)
      )
        best = s;
      return;
    }
    left.forEach((v, i) => permute([...prefix, v], [...left.slice(0, i), ...left.slice(i + 1)]));
  };
  permute([], rest);
  return best;
}

const isCycle = (order: readonly number[], k: number, hop: Float64Array): boolean =>
  order.length === k &&
  new Set(order).size === k &&
  order.every((v, i) => (hop[v * k + (order[(i + 1) % k] as number)] as number) !== NONE);

t.test('exact search matches brute force on random graphs (3–8 nodes)', async (t) => {
  let feasible = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const k = 3 + (seed % 6);
    const { hop, rtt } = randomProblem(k, seed, seed % 3 === 0 ? 1 : 0.6);
    const want = bruteForce(k, hop, rtt);
    const got = searchRing(k, hop, rtt, createRng(seed));
    if (!want) {
      t.equal(got, undefined, `seed ${seed}: no ring`);
      continue;
    }
    feasible++;
    t.ok(got && isCycle(got.order, k, hop), `seed ${seed}: a valid ring`);
    t.equal(got?.bottleneck, want.bottleneck, `seed ${seed}: best bottleneck`);
    t.ok(Math.abs((got?.rttSum ?? 0) - want.rttSum) < 1e-9, `seed ${seed}: least RTT among the best`);
    const stats = cycleStats(got?.order ?? [], k, hop, rtt);
    t.equal(stats.bottleneck, got?.bottleneck, 'reported bottleneck is the real one');
  }
  t.ok(feasible > 20, 'enough feasible cases');
});

t.test('heuristic finds valid rings and matches the exact bottleneck on dense graphs', async (t) => {
  for (let seed = 1; seed <= 30; seed++) {
    const k = 6 + (seed % 7);
    const { hop, rtt } = randomProblem(k, seed * 31, 0.9);
    const exact = exactSearch(k, hop, rtt);
    const heur = heuristicSearch(k, hop, rtt, createRng(seed));
    if (!exact) continue;
    t.ok(heur && isCycle(heur.order, k, hop), `seed ${seed}: valid`);
    t.equal(heur?.bottleneck, exact.bottleneck, `seed ${seed}: same bottleneck`);
    t.ok((heur?.rttSum ?? Infinity) >= exact.rttSum - 1e-9, 'never below the exact RTT optimum');
  }
});

t.test('planted fast ring in a slow complete graph (32 and 64 nodes)', async (t) => {
  for (const k of [13, 32, 64]) {
    const rng = createRng(k);
    const hop = new Float64Array(k * k).fill(NONE);
    const rtt = new Float64Array(k * k).fill(1);
    for (let a = 0; a < k; a++) for (let b = 0; b < k; b++) if (a !== b) hop[a * k + b] = 16 + rng.int(1, 1000) * 1e6;
    const perm = Array.from({ length: k }, (_, i) => i);
    for (let i = k - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [perm[i], perm[j]] = [perm[j] as number, perm[i] as number];
    }
    for (let i = 0; i < k; i++) {
      const a = perm[i] as number,
        b = perm[(i + 1) % k] as number;
      hop[a * k + b] = hop[b * k + a] = 16 + 10e9 + i;
    }
    const got = searchRing(k, hop, rtt, createRng(1));
    t.ok(got && isCycle(got.order, k, hop), `${k}: valid ring`);
    t.ok((got?.bottleneck ?? 0) >= 16 + 10e9, `${k}: every hop is a planted fast hop`);
    t.equal(got?.method, 'heuristic');
  }
});

t.test('sparse rings: a bare ring and a 2D torus are found; a path has none', async (t) => {
  const ring = (k: number): number[][] => Array.from({ length: k }, (_, v) => [(v + 1) % k, (v + k - 1) % k]);
  const order = findHamiltonianCycle(ring(40), createRng(3), 100000);
  t.equal(order?.length, 40);
  const side = 6;
  const torus = Array.from({ length: side * side }, (_, v) => {
    const x = v % side,
      y = Math.floor(v / side);
    return [
      ((x + 1) % side) + y * side,
      ((x + side - 1) % side) + y * side,
      x + ((y + 1) % side) * side,
      x + ((y + side - 1) % side) * side,
    ];
  });
  t.equal(findHamiltonianCycle(torus, createRng(5), 200000)?.length, 36);
  const path = Array.from({ length: 20 }, (_, v) => [v - 1, v + 1].filter((u) => u >= 0 && u < 20));
  t.equal(findHamiltonianCycle(path, createRng(1), 10000), undefined);
});

t.test('same seed, same ring', async (t) => {
  const { hop, rtt } = randomProblem(40, 9, 0.5);
  t.same(searchRing(40, hop, rtt, createRng(5)), searchRing(40, hop, rtt, createRng(5)));
});
