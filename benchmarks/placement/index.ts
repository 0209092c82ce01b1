/**
 * Placement planning time at scale: fully connected clusters of 8–64 nodes and sparse topologies (Thunderbolt
 * rings, 2D tori, rings with chords, a daisy chain), through the whole planner (decode, candidate sets, ring
 * search, plan assembly); the workload needs the memory of N nodes (so at least N nodes). Beside each time: the number of simple directed cycles an enumerate-all-cycles
 * planner (exo) would walk on the same graph. Usage: node build/benchmarks/placement/index.js [--quick] [--json]
 */
import { performance } from 'node:perf_hooks';
import { decodePlacementInput } from '../../src/actors/placement-planner/search/placement-input.js';
import { decodePlacementRequest } from '../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal } from '../../src/actors/placement-planner/search/plan-result.js';
import { createRng } from '../../src/actors/placement-planner/search/rng.js';

const quick = process.argv.includes('--quick');
const asJson = process.argv.includes('--json');
const GB = 1e9;

interface Topology {
  name: string;
  n: number;
  pairs: [number, number, number][] /* a, b, bits/s */;
}

function complete(n: number, seed: number): Topology {
  const rng = createRng(seed);
  const pairs: [number, number, number][] = [];
  for (let a = 0; a < n; a++) for (let b = a + 1; b < n; b++) pairs.push([a, b, (1 + rng.int(0, 99)) * 1e8]);
  return { name: `fully connected ${n}`, n, pairs };
}

function tbRing(n: number): Topology {
  return {
    name: `Thunderbolt ring ${n}`,
    n,
    pairs: Array.from({ length: n }, (_, i) => [i, (i + 1) % n, 20e9] as [number, number, number]),
  };
}

function torus(side: number): Topology {
  const pairs: [number, number, number][] = [];
  for (let v = 0; v < side * side; v++) {
    const x = v % side,
      y = Math.floor(v / side);
    pairs.push([v, ((x + 1) % side) + y * side, 10e9], [v, x + ((y + 1) % side) * side, 10e9]);
  }
  return { name: `2D torus ${side}x${side}`, n: side * side, pairs };
}

function ringWithChords(n: number, chords: number, seed: number): Topology {
  const rng = createRng(seed);
  const pairs = tbRing(n).pairs.map(([a, b]) => [a, b, 10e9] as [number, number, number]);
  const seen = new Set(pairs.map(([a, b]) => `${Math.min(a, b)},${Math.max(a, b)}`));
  while (pairs.length < n + chords) {
    const a = rng.int(0, n - 1),
      b = rng.int(0, n - 1);
    const key = `${Math.min(a, b)},${Math.max(a, b)}`;
    if (a === b || seen.has(key)) continue;
    seen.add(key);
    pairs.push([a, b, (1 + rng.int(0, 40)) * 1e9]);
  }
  return { name: `ring ${n} + ${chords} chords`, n, pairs };
}

function chain(n: number): Topology {
  return {
    name: `daisy chain ${n}`,
    n,
    pairs: Array.from({ length: n - 1 }, (_, i) => [i, i + 1, 10e9] as [number, number, number]),
  };
}

function stateOf(topo: Topology): unknown {
  const id = (i: number): string => `n${String(i).padStart(2, '0')}`;
  const nodes = Array.from({ length: topo.n }, (_, i) => ({
    id: id(i),
    memory: { ramAvailable: 16 * GB, ramTotal: 32 * GB },
    interfaces: [] as { name: string; ip: string; type: string }[],
  }));
  const links: unknown[] = [];
  let ip = 0;
  for (const [a, b, bw] of topo.pairs) {
    for (const [s, t] of [
      [a, b],
      [b, a],
    ] as const) {
      ip++;
      const addr = `10.77.${Math.floor(ip / 250)}.${(ip % 250) + 1}`;
      nodes[t]?.interfaces.push({ name: `en${ip}`, ip: addr, type: 'ethernet' });
      links.push({ source: id(s), sink: id(t), ip: addr, bandwidthBps: bw, rttMs: 0.1 + (ip % 7) / 10 });
    }
  }
  return { nodes, links };
}

/** Directed simple cycles (length ≥ 2) of K_n with both directions per pair: Σ C(n,k)(k−1)!. */
function completeCycleCount(n: number): bigint {
  let total = 0n;
  for (let k = 2; k <= n; k++) {
    let c = 1n;
    for (let i = 0; i < k; i++) c = (c * BigInt(n - i)) / BigInt(i + 1);
    let f = 1n;
    for (let i = 2; i < k; i++) f *= BigInt(i);
    total += c * f;
  }
  return total;
}

/** Counts directed simple cycles by DFS from each start over higher-numbered vertices, stopping at `cap`. */
function countCycles(topo: Topology, cap: number): { count: number; capped: boolean } {
  const adj: number[][] = Array.from({ length: topo.n }, () => []);
  for (const [a, b] of topo.pairs) {
    adj[a]?.push(b);
    adj[b]?.push(a);
  }
  let count = 0;
  const onPath = new Uint8Array(topo.n);
  const dfs = (start: number, v: number): boolean => {
    for (const u of adj[v] as number[]) {
      if (u === start) {
        count++;
        if (count >= cap) return true;
        continue;
      }
      if (u < start || onPath[u]) continue;
      onPath[u] = 1;
      if (dfs(start, u)) return true;
      onPath[u] = 0;
    }
    return false;
  };
  for (let s = 0; s < topo.n; s++) {
    onPath.fill(0);
    onPath[s] = 1;
    if (dfs(s, s)) return { count, capped: true };
  }
  return { count, capped: false };
}

function fmtBig(x: bigint): string {
  const s = x.toString();
  return s.length <= 9 ? Number(s).toLocaleString('en-US') : `${s[0]}.${s.slice(1, 3)}e${s.length - 1}`;
}

interface Row {
  topology: string;
  nodes: number;
  setSize: string;
  outcome: string;
  medianMs: number;
  maxMs: number;
  search: string;
  cycles: string;
}

function bench(topo: Topology, needNodes: number, runs: number): Row {
  const state = decodePlacementInput(stateOf(topo));
  const request = decodePlacementRequest({
    workload: { id: 'w', memoryBytes: needNodes * 16 * GB - 1, layers: 4 * topo.n },
    sharding: 'pipeline',
    backend: 'ring',
  });
  const times: number[] = [];
  let outcome = '',
    search = '';
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    const result = planPlacement(state, request, { seed: r });
    times.push(performance.now() - t0);
    if (isRefusal(result)) {
      outcome = `refused (${result.refusal.kind})`;
      search = '-';
    } else {
      const bps = result.explanation.chosen?.slowestHopBps;
      outcome = `${result.instance.nodes.length} nodes, slowest hop ${bps ? `${(bps / 1e9).toFixed(1)} Gbit/s` : '?'}`;
      search = `${result.explanation.sizes.at(-1)?.generation ?? ''} / ${result.explanation.chosen?.search ?? ''}`;
    }
  }
  times.sort((a, b) => a - b);
  const sparse = !topo.name.startsWith('fully');
  const cycles = sparse
    ? (() => {
        const c = countCycles(topo, 1e7);
        return c.capped ? '> 10,000,000' : c.count.toLocaleString('en-US');
      })()
    : fmtBig(completeCycleCount(topo.n));
  return {
    topology: topo.name,
    nodes: topo.n,
    setSize: `${needNodes}`,
    outcome,
    medianMs: Math.round((times[times.length >> 1] as number) * 100) / 100,
    maxMs: Math.round((times.at(-1) as number) * 100) / 100,
    search,
    cycles,
  };
}

const runs = quick ? 3 : 9;
const cases: [Topology, number][] = [
  [complete(8, 8), 8],
  [complete(16, 16), 16],
  [complete(32, 32), 32],
  [complete(64, 64), 64],
  [complete(16, 16), 8],
  [complete(32, 32), 16],
  [complete(64, 64), 32],
  [complete(64, 64), 2],
  [tbRing(16), 16],
  [tbRing(64), 64],
  [torus(4), 16],
  [torus(8), 64],
  [ringWithChords(32, 16, 1), 32],
  [ringWithChords(64, 32, 2), 64],
  [ringWithChords(64, 32, 3), 40],
  [chain(32), 3],
];
const rows = (quick ? cases.filter(([t, k]) => t.n <= 32 || k === t.n) : cases).map(([t, k]) => bench(t, k, runs));

if (asJson) console.log(JSON.stringify({ runs, rows }, null, 2));
else {
  const head = [
    'topology',
    'nodes',
    'memory of N nodes needed',
    'median ms',
    'max ms',
    'generation / ring search',
    'outcome',
    'simple cycles (exo enumerates)',
  ];
  const body = rows.map((r) => [
    r.topology,
    String(r.nodes),
    r.setSize,
    r.medianMs.toFixed(2),
    r.maxMs.toFixed(2),
    r.search,
    r.outcome,
    r.cycles,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] as string).length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ');
  console.log(
    `placement planning time, ${runs} runs per row (seeds 0..${runs - 1}); targets: 32 fully connected < 100 ms, 64 < 1 s`,
  );
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const row of body) console.log(line(row));
}
