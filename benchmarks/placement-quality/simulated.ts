/**
 * Placement quality on simulated desks: 2–64 nodes drawn from real device figures (Apple M-series laptops and
 * Studios, a CUDA box declared by flags, Linux CPU boxes) joined by Thunderbolt (40 Gbit/s), 10 and 1 Gbit/s
 * Ethernet and Wi-Fi (an interface's label does not always say its speed: a Wi-Fi-speed link may sit on an
 * interface labelled ethernet, and the other way round). Workloads: a 70B model that one large node holds alone, and
 * a 405B model that needs several. Up to 8 nodes, every feasible option (node set × ring order) is predicted and the planner's
 * choice is compared with the best of them (target: within 5 %); beside it, exo's rule (exo-rule.ts: smallest
 * feasible set, ring order and addresses by interface label, no measurement), both priced by torus's cost model,
 * exo's over the links its labels pick; at every size, the plan time (target: < 1 s at 64 nodes).
 * Usage: node build/benchmarks/placement-quality/index.js [--quick] [--json] (index.ts; --lab runs lab.ts instead)
 */
import { performance } from 'node:perf_hooks';
import { indexCluster } from '../../src/actors/placement-planner/search/cluster-index.js';
import { decodePlacementInput } from '../../src/actors/placement-planner/search/placement-input.js';
import { predictionScore, predictPipeline } from '../../src/actors/placement-planner/search/cost-model.js';
import { findShareShortfall, splitLayersByMemory } from '../../src/actors/placement-planner/search/layer-split.js';
import {
  decodePlacementRequest,
  type PlacementRequest,
} from '../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal } from '../../src/actors/placement-planner/search/plan-result.js';
import { createRng, type Rng } from '../../src/actors/placement-planner/search/rng.js';
import { formatTable, machineLoad, type BenchRow } from '../table.js';
import { exoRule, priceExoChoice } from './exo-rule.js';

const quick = process.argv.includes('--quick');
const asJson = process.argv.includes('--json');
const GB = 1e9;

interface Device {
  name: string;
  memoryGB: number;
  memoryBandwidthGBps: number;
  gflops: number;
  mac: boolean;
}
/** Published figures (memory bandwidth, f32 GFLOP/s of the GPU or CPU the model runs on, usable memory). */
const DEVICES: readonly Device[] = [
  { name: 'MacBook Pro M3 Pro', memoryGB: 30, memoryBandwidthGBps: 150, gflops: 7400, mac: true },
  { name: 'MacBook Pro M3 Max', memoryGB: 100, memoryBandwidthGBps: 400, gflops: 16400, mac: true },
  { name: 'Mac Studio M2 Ultra', memoryGB: 170, memoryBandwidthGBps: 800, gflops: 27200, mac: true },
  { name: 'CUDA box RTX 4090 (declared)', memoryGB: 22, memoryBandwidthGBps: 1008, gflops: 82600, mac: false },
  { name: 'Linux CPU box', memoryGB: 120, memoryBandwidthGBps: 60, gflops: 1500, mac: false },
];
const LINKS = {
  thunderbolt: { bw: 40e9, rtt: 0.06 },
  ethernet10: { bw: 10e9, rtt: 0.1 },
  ethernet1: { bw: 1e9, rtt: 0.3 },
  wifi: { bw: 0.3e9, rtt: 4 },
} as const;

/** A desk of n nodes: every pair on 1 GbE or Wi-Fi, some on 10 GbE, Macs of one desk group on Thunderbolt too. */
function desk(n: number, rng: Rng): { state: unknown; devices: Device[] } {
  const devices = Array.from({ length: n }, () => DEVICES[rng.int(0, DEVICES.length - 1)] as Device);
  const ids = devices.map((_, i) => `n${String(i).padStart(2, '0')}`);
  const nodes = devices.map((d, i) => ({
    id: ids[i],
    memory: { ramAvailable: d.memoryGB * GB, ramTotal: d.memoryGB * GB * 1.2 },
    interfaces: [] as { name: string; ip: string; type: string }[],
    device: { memoryBandwidthGBps: d.memoryBandwidthGBps, gflops: d.gflops },
  }));
  const links: Record<string, unknown>[] = [];
  let ip = 0;
  const addr = (sink: number, type: string): string => {
    ip++;
    const a = `10.77.${Math.floor(ip / 250)}.${(ip % 250) + 1}`;
    nodes[sink]?.interfaces.push({ name: `${type}${ip}`, ip: a, type });
    return a;
  };
  const join = (a: number, b: number, kind: keyof typeof LINKS, type: string): void => {
    const { bw, rtt } = LINKS[kind];
    links.push({ source: ids[a], sink: ids[b], ip: addr(b, type), bandwidthBps: bw, rttMs: rtt });
    links.push({ source: ids[b], sink: ids[a], ip: addr(a, type), bandwidthBps: bw, rttMs: rtt });
  };
  const group = (i: number): number => Math.floor(i / 4);
  for (let a = 0; a < n; a++)
    for (let b = a + 1; b < n; b++) {
      join(a, b, rng.int(0, 3) === 0 ? 'wifi' : 'ethernet1', rng.int(0, 3) === 0 ? 'wifi' : 'ethernet');
      if (rng.int(0, 2) === 0) join(a, b, 'ethernet10', 'ethernet');
      if (devices[a]?.mac && devices[b]?.mac && group(a) === group(b)) join(a, b, 'thunderbolt', 'thunderbolt');
    }
  return { state: { nodes, links }, devices };
}

/** Every feasible option (set ⊆ nodes × ring order with rank 0 fixed, both directions), its best predicted score. */
function exhaustiveBest(state: unknown, request: PlacementRequest): number | undefined {
  const index = indexCluster(decodePlacementInput(state), 'ring');
  const n = index.n;
  const w = request.workload;
  let best: number | undefined;
  for (let mask = 1; mask < 1 << n; mask++) {
    const members: number[] = [];
    for (let i = 0; i < n; i++) if (mask & (1 << i)) members.push(i);
    const available = members.map((m) => index.nodes[m]?.memory?.ramAvailable ?? 0);
    if (available.reduce((s, x) => s + x, 0) < w.memoryBytes || w.layers < members.length) continue;
    const split = splitLayersByMemory(w.layers, available);
    if (findShareShortfall(w.memoryBytes, w.layers, split, available)) continue;
    const layersOf = new Map(members.map((m, i) => [m, split[i] as number]));
    permute(members.slice(1), (rest) => {
      const order = [members[0] as number, ...rest];
      const p = predictPipeline(
        index,
        order,
        order.map((m) => layersOf.get(m) as number),
        w,
        request.objective,
      );
      const score = predictionScore(p);
      if (score !== undefined && (best === undefined || score < best)) best = score;
    });
  }
  return best;
}

function permute(items: number[], visit: (order: number[]) => void, at = 0): void {
  if (at >= items.length - 1) {
    visit(items);
    return;
  }
  for (let i = at; i < items.length; i++) {
    [items[at], items[i]] = [items[i] as number, items[at] as number];
    permute(items, visit, at + 1);
    [items[at], items[i]] = [items[i] as number, items[at] as number];
  }
}

const workloads: { name: string; body: Record<string, unknown> }[] = [
  {
    name: '70B 8-bit decode',
    body: { workload: { id: 'llama-70b-q8', memoryBytes: 70 * GB, layers: 80, hiddenSize: 8192 } },
  },
  {
    name: '70B 8-bit prefill 512',
    body: {
      workload: { id: 'llama-70b-q8', memoryBytes: 70 * GB, layers: 80, hiddenSize: 8192, tokensPerStep: 512 },
    },
  },
  {
    name: '70B 8-bit batched',
    body: {
      workload: { id: 'llama-70b-q8', memoryBytes: 70 * GB, layers: 80, hiddenSize: 8192 },
      objective: 'throughput',
    },
  },
  {
    // no node holds it alone (the largest has 170 GB): exo's rule needs several nodes, so its labels pick links
    name: '405B 4-bit decode',
    body: { workload: { id: 'llama-405b-q4', memoryBytes: 203 * GB, layers: 126, hiddenSize: 16384 } },
  },
];

const rows: BenchRow[] = [];
const sizes = quick ? [2, 4, 8, 16, 64] : [2, 3, 4, 5, 6, 7, 8, 16, 32, 64];
const desksPerSize = quick ? 2 : 5;
for (const n of sizes) {
  for (const wl of workloads) {
    let worstGap = 0,
      maxMs = 0,
      sumMs = 0,
      planned = 0,
      speedupSum = 0,
      speedups = 0,
      exoPlanned = 0;
    const exoSizes = new Set<number>();
    for (let d = 0; d < desksPerSize; d++) {
      const { state } = desk(n, createRng(1000 * n + d));
      const body = { sharding: 'pipeline', backend: 'ring', ...wl.body };
      const request = decodePlacementRequest(body);
      const t0 = performance.now();
      const result = planPlacement(decodePlacementInput(state), request, { seed: d + 1 });
      const ms = performance.now() - t0;
      maxMs = Math.max(maxMs, ms);
      sumMs += ms;
      if (isRefusal(result)) continue;
      planned++;
      const score = predictionScore(result.predicted) as number;
      if (n <= 8) {
        const best = exhaustiveBest(state, request);
        if (best !== undefined) worstGap = Math.max(worstGap, score / best - 1);
      }
      const exo = exoRule(decodePlacementInput(state), request);
      if ('choice' in exo) {
        exoPlanned++;
        exoSizes.add(exo.choice.nodes.length);
        const exoScore = priceExoChoice(state, request, exo.choice);
        if (exoScore !== undefined) {
          speedupSum += exoScore / score;
          speedups++;
        }
      }
    }
    rows.push({
      nodes: n,
      workload: wl.name,
      desks: desksPerSize,
      planned,
      'worst gap to exhaustive %': n <= 8 ? +(worstGap * 100).toFixed(2) : 'n/a',
      'exo planned': exoPlanned,
      'exo set size': exoSizes.size ? [...exoSizes].sort((a, b) => a - b).join(',') : 'n/a',
      'vs exo rule (predicted ×)': speedups ? +(speedupSum / speedups).toFixed(2) : 'n/a',
      'mean plan ms': +(sumMs / desksPerSize).toFixed(1),
      'max plan ms': +maxMs.toFixed(1),
    });
  }
}

const note =
  "Both sides are priced by torus's own cost model: the planner's choice, every feasible option, and exo's rule " +
  '(smallest feasible set, first ring in node order, addresses by interface label) over the links exo would dial. ' +
  "'vs exo rule' = exo's predicted step (period for batched) ÷ the planner's, averaged over the desks both planned.";
if (asJson) console.log(JSON.stringify({ load: machineLoad(), rows, note }));
else {
  console.log(formatTable(rows));
  console.log(note);
  console.log(`load: ${JSON.stringify(machineLoad())}`);
}
