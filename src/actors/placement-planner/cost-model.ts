import type { ClusterIndex } from './cluster-index.js';
import type { Objective, Workload } from './placement-request.js';

/**
 * The predicted cost of one step of a plan (docs/placement.md, "Predicted step time"). Pure arithmetic over the
 * nodes' device figures and the measured links of the addresses the plan uses. A figure that is missing is named
 * in `unmeasured` and makes the totals null: nothing is guessed.
 */
export interface BreakdownEntry {
  /** a node id (its stage, or its share of every layer for tensor) */
  readonly stage?: string;
  /** `a→b` for a pipeline hop; `all-reduce` for tensor's collectives */
  readonly hop?: string;
  readonly ms: number | null;
}

export interface Prediction {
  /** Time of one step (tokensPerStep tokens through every layer), ms. */
  readonly stepMs: number | null;
  /** latency objective: tokensPerStep / stepMs; throughput: tokensPerStep / slowest stage or hop (pipeline full). */
  readonly tokensPerS: number | null;
  /** Time per step with the pipeline full (the slowest stage or hop; tensor: the step itself), ms. */
  readonly periodMs: number | null;
  readonly objective: Objective;
  readonly breakdown: readonly BreakdownEntry[];
  /** What the prediction lacked, e.g. `mac-a: gflops`, `a→b: bandwidth`. */
  readonly unmeasured: readonly string[];
}

/** Per-layer time of one node holding `share` of each layer, ms; undefined when a figure is missing. */
export function layerMs(index: ClusterIndex, node: number, workload: Workload, share = 1): number | undefined {
  const device = index.nodes[node]?.device;
  if (device?.memoryBandwidthGBps === undefined || device.gflops === undefined) return undefined;
  const memoryMs = ((workload.bytesPerLayer * share) / (device.memoryBandwidthGBps * 1e9)) * 1e3;
  const computeMs = ((workload.flopsPerTokenPerLayer * workload.tokensPerStep * share) / (device.gflops * 1e9)) * 1e3;
  return Math.max(memoryMs, computeMs);
}

/** One pipeline hop from → to over the address `from` dials: half the RTT plus the activation's transfer, ms. */
export function hopMs(index: ClusterIndex, from: number, to: number, workload: Workload): number | undefined {
  const choice = index.ringChoice[from * index.n + to];
  const act = workload.activationBytesPerToken;
  if (!choice || choice.bandwidthBps === undefined || choice.rttMs === undefined || act === undefined) return undefined;
  return choice.rttMs / 2 + ((act * workload.tokensPerStep * 8) / choice.bandwidthBps) * 1e3;
}

function missingDevice(index: ClusterIndex, node: number): string[] {
  const device = index.nodes[node]?.device;
  const id = index.ids[node];
  const out: string[] = [];
  if (device?.memoryBandwidthGBps === undefined) out.push(`${id}: memory bandwidth`);
  if (device?.gflops === undefined) out.push(`${id}: gflops`);
  return out;
}

function missingHop(index: ClusterIndex, from: number, to: number, workload: Workload): string[] {
  if (workload.activationBytesPerToken === undefined) return ['workload: activationBytesPerToken (or hiddenSize)'];
  const choice = index.ringChoice[from * index.n + to];
  const name = `${index.ids[from]}→${index.ids[to]}`;
  if (!choice) return [`${name}: no socket link`];
  const out: string[] = [];
  if (choice.bandwidthBps === undefined) out.push(`${name}: bandwidth`);
  if (choice.rttMs === undefined) out.push(`${name}: rtt`);
  return out;
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;
const sumOrNull = (xs: readonly (number | undefined)[]): number | null =>
  xs.some((x) => x === undefined) ? null : xs.reduce<number>((s, x) => s + (x as number), 0);

/**
 * Pipeline: stage r holds layers[r] consecutive layers and streams their weights once per step; every ring hop
 * (k of them for k ≥ 2, the last carrying the step's output back to rank 0) sends the activation of each token.
 * A model workload gives `stageBytes` (the real bytes of each stage's tensors): a stage then costs its bytes
 * at the node's per-layer time for bytesPerLayer bytes.
 */
export function predictPipeline(
  index: ClusterIndex,
  order: readonly number[],
  layers: readonly number[],
  workload: Workload,
  objective: Objective,
  stageBytes?: readonly number[],
): Prediction {
  const k = order.length;
  const unmeasured: string[] = [];
  const stages = order.map((m, r) => {
    const per = layerMs(index, m, workload);
    if (per === undefined) unmeasured.push(...missingDevice(index, m));
    if (per === undefined) return undefined;
    return per * (stageBytes ? (stageBytes[r] as number) / workload.bytesPerLayer : (layers[r] as number));
  });
  const hops: (number | undefined)[] = [];
  if (k > 1)
    for (let r = 0; r < k; r++) {
      const from = order[r] as number,
        to = order[(r + 1) % k] as number;
      const ms = hopMs(index, from, to, workload);
      if (ms === undefined) unmeasured.push(...missingHop(index, from, to, workload));
      hops.push(ms);
    }
  const breakdown: BreakdownEntry[] = [];
  order.forEach((m, r) => {
    const s = stages[r];
    breakdown.push({ stage: index.ids[m] as string, ms: s === undefined ? null : round(s) });
    if (k > 1) {
      const h = hops[r];
      breakdown.push({
        hop: `${index.ids[m]}→${index.ids[order[(r + 1) % k] as number]}`,
        ms: h === undefined ? null : round(h),
      });
    }
  });
  const step = sumOrNull([...stages, ...hops]);
  const slowest = step === null ? null : Math.max(...(stages as number[]), ...(hops as number[]));
  return finish(step, slowest, workload, objective, breakdown, unmeasured);
}

/**
 * Tensor: every node computes its 1/k share of each layer (the slowest node sets the pace), then two ring
 * all-reduces of the activation per layer: 2(k−1)/k × bytes over the slowest hop plus (k−1) one-way latencies.
 */
export function predictTensor(
  index: ClusterIndex,
  order: readonly number[],
  workload: Workload,
  objective: Objective,
): Prediction {
  const k = order.length;
  const unmeasured: string[] = [];
  const shares = order.map((m) => {
    const per = layerMs(index, m, workload, 1 / k);
    if (per === undefined) unmeasured.push(...missingDevice(index, m));
    return per;
  });
  let allReduceMs: number | undefined = 0;
  if (k > 1) {
    let slowestBps = Number.POSITIVE_INFINITY,
      latencyMs = 0;
    for (let r = 0; r < k; r++) {
      const from = order[r] as number,
        to = order[(r + 1) % k] as number;
      const choice = index.ringChoice[from * index.n + to];
      if (
        !choice ||
        choice.bandwidthBps === undefined ||
        choice.rttMs === undefined ||
        workload.activationBytesPerToken === undefined
      ) {
        unmeasured.push(...missingHop(index, from, to, workload));
        allReduceMs = undefined;
        continue;
      }
      slowestBps = Math.min(slowestBps, choice.bandwidthBps);
      latencyMs = Math.max(latencyMs, choice.rttMs / 2);
    }
    if (allReduceMs !== undefined) {
      const bytes = (workload.activationBytesPerToken as number) * workload.tokensPerStep;
      allReduceMs = (((2 * (k - 1)) / k) * bytes * 8 * 1e3) / slowestBps + (k - 1) * latencyMs;
    }
  }
  const L = workload.layers;
  const breakdown: BreakdownEntry[] = order.map((m, r) => {
    const s = shares[r];
    return { stage: index.ids[m] as string, ms: s === undefined ? null : round(s * L) };
  });
  if (k > 1) breakdown.push({ hop: 'all-reduce', ms: allReduceMs === undefined ? null : round(2 * L * allReduceMs) });
  const slowestShare = shares.some((s) => s === undefined) ? undefined : Math.max(...(shares as number[]));
  const step = slowestShare === undefined || allReduceMs === undefined ? null : L * (slowestShare + 2 * allReduceMs);
  // A tensor group works on one step at a time: its throughput is its latency's.
  return finish(step, step, workload, objective, breakdown, unmeasured);
}

function finish(
  step: number | null,
  slowest: number | null,
  workload: Workload,
  objective: Objective,
  breakdown: BreakdownEntry[],
  unmeasured: string[],
): Prediction {
  const paceMs = objective === 'throughput' ? slowest : step;
  return {
    stepMs: step === null ? null : round(step),
    periodMs: slowest === null ? null : round(slowest),
    tokensPerS: paceMs === null || paceMs <= 0 ? null : round((workload.tokensPerStep * 1e3) / paceMs),
    objective,
    breakdown,
    unmeasured: [...new Set(unmeasured)],
  };
}

/** Lower is better: the step time for latency, the time per step at full pipeline for throughput. */
export function predictionScore(p: Prediction): number | undefined {
  if (p.stepMs === null || p.periodMs === null) return undefined;
  return p.objective === 'throughput' ? p.periodMs : p.stepMs;
}
