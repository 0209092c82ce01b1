import type { AddressChoice } from './address-choice.js';
import type { ClusterIndex } from './cluster-index.js';
import { meshHopChoices } from './mesh-addresses.js';
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
  /** When the workload names a framework: per node, the figures it was predicted with (its calibration or not). */
  readonly figures?: Readonly<Record<string, string>>;
}

/** The figures a node is predicted with, and what they are (the plan says it per node). */
export interface FiguresUsed {
  readonly memoryBandwidthGBps: number;
  readonly gflops: number;
  /** 0 for device figures: torus's kernels have no per-layer cost of their own */
  readonly layerOverheadMs: number;
  /** the framework's cost of one pipeline hop, the link aside; 0 for device figures and older calibrations */
  readonly hopOverheadMs: number;
  /** calibrated: memory, compute and overhead add up (the calibration fits that sum); device: max(memory, compute) */
  readonly calibrated: boolean;
  /** e.g. `torch calibration 2026-12-07T20:40:00.000Z` or `torus kernels` */
  readonly label: string;
}

export const DEVICE_FIGURES_LABEL = 'torus kernels';

/** A node's calibrated figures for the workload's framework when it has them, else its device figures. */
export function nodeFigures(index: ClusterIndex, node: number, workload: Workload): FiguresUsed | undefined {
  const state = index.nodes[node];
  const framework = workload.framework;
  const cal =
    framework !== undefined && state?.calibrations && Object.hasOwn(state.calibrations, framework)
      ? state.calibrations[framework]
      : undefined;
  if (cal)
    return {
      memoryBandwidthGBps: cal.memoryBandwidthGBps,
      gflops: cal.gflops,
      layerOverheadMs: cal.layerOverheadMs,
      hopOverheadMs: cal.hopOverheadMs ?? 0,
      calibrated: true,
      label: `${framework} calibration ${new Date(cal.measuredAt).toISOString()}`,
    };
  const device = state?.device;
  if (device?.memoryBandwidthGBps === undefined || device.gflops === undefined) return undefined;
  const { memoryBandwidthGBps, gflops } = device;
  return {
    memoryBandwidthGBps,
    gflops,
    layerOverheadMs: 0,
    hopOverheadMs: 0,
    calibrated: false,
    label: DEVICE_FIGURES_LABEL,
  };
}

/**
 * Attention's KV-cache bytes read by one layer in one step: every position the step's tokens attend to (the
 * context and the step's own). 0 unless the workload names `contextTokens`.
 */
export function kvReadBytes(workload: Workload): number {
  if (workload.contextTokens === undefined) return 0;
  const perPosition = workload.kvBytesPerTokenPerLayer ?? (workload.hiddenSize ?? 0) * 4;
  return perPosition * (workload.contextTokens + workload.tokensPerStep);
}

/**
 * Attention's FLOPs in one layer for one step: token i of the step scores and sums over contextTokens + i + 1
 * positions, 2 FLOPs × hiddenSize each way: 4·h·(N·C + N(N+1)/2). 0 unless `contextTokens` and `hiddenSize` are given.
 */
export function attentionFlops(workload: Workload): number {
  if (workload.contextTokens === undefined || workload.hiddenSize === undefined) return 0;
  const n = workload.tokensPerStep;
  return 4 * workload.hiddenSize * (n * workload.contextTokens + (n * (n + 1)) / 2);
}

/**
 * Per-layer time of one node holding `share` of each layer, ms; undefined when a figure is missing. Memory: the
 * layer's weights and its KV-cache reads; compute: its FLOPs for every token of the step (prefill is many tokens
 * over the same weights, so compute dominates; decode is one, so memory does). Device figures overlap the two
 * (max, as torus's kernels measured each alone); calibrated ones add them and a fixed per-layer overhead, the model
 * the calibration fits (docs/placement.md, "Calibrated figures").
 */
export function layerMs(index: ClusterIndex, node: number, workload: Workload, share = 1): number | undefined {
  const f = nodeFigures(index, node, workload);
  if (f === undefined) return undefined;
  const memoryMs = (((workload.bytesPerLayer + kvReadBytes(workload)) * share) / (f.memoryBandwidthGBps * 1e9)) * 1e3;
  const flops = workload.flopsPerTokenPerLayer * workload.tokensPerStep + attentionFlops(workload);
  const computeMs = ((flops * share) / (f.gflops * 1e9)) * 1e3;
  return f.calibrated ? f.layerOverheadMs + memoryMs + computeMs : Math.max(memoryMs, computeMs);
}

/** Per node of `order`, which figures predicted it; only when the workload names a framework (else all are device). */
function figuresUsed(
  index: ClusterIndex,
  order: readonly number[],
  workload: Workload,
): Record<string, string> | undefined {
  if (workload.framework === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const m of order) {
    const f = nodeFigures(index, m, workload);
    out[index.ids[m] as string] = f ? f.label : 'none';
  }
  return out;
}

/**
 * Bytes a pipeline hop carries per step: the activation of every token, except on the last hop (back to rank 0)
 * when the workload says what returns (`returnBytesPerStep`, e.g. a sampled token); undefined without a figure.
 */
export function hopBytes(workload: Workload, last: boolean): number | undefined {
  if (last && workload.returnBytesPerStep !== undefined) return workload.returnBytesPerStep;
  const act = workload.activationBytesPerToken;
  return act === undefined ? undefined : act * workload.tokensPerStep;
}

/**
 * The framework's own cost of one hop from → to, the link aside: the mean of the two ends' calibrated hop
 * overheads (the sender's send, the receiver's wake-up; each node measured both between two of its own processes).
 * 0 for an end without one (device figures, an older calibration).
 */
export function hopOverheadMs(index: ClusterIndex, from: number, to: number, workload: Workload): number {
  const a = nodeFigures(index, from, workload)?.hopOverheadMs ?? 0;
  const b = nodeFigures(index, to, workload)?.hopOverheadMs ?? 0;
  return (a + b) / 2;
}

/**
 * One pipeline hop from → to over `choice` (default: the ring address `from` dials): half the RTT plus the
 * transfer of its bytes plus the framework's hop overhead, ms. `last`: the hop back to rank 0 (what it carries may
 * differ, hopBytes).
 */
export function hopMs(
  index: ClusterIndex,
  from: number,
  to: number,
  workload: Workload,
  last = false,
  choice: AddressChoice | undefined = index.ringChoice[from * index.n + to],
): number | undefined {
  const bytes = hopBytes(workload, last);
  if (!choice || choice.bandwidthBps === undefined || choice.rttMs === undefined || bytes === undefined)
    return undefined;
  return choice.rttMs / 2 + ((bytes * 8) / choice.bandwidthBps) * 1e3 + hopOverheadMs(index, from, to, workload);
}

/**
 * The link each hop of `order` takes: a framework job's ranks dial each other's mesh address (torch's full mesh,
 * mesh-addresses.ts), so its hops are priced over those links; torus's own ring dials the ring addresses.
 */
export function pipelineHopChoices(
  index: ClusterIndex,
  order: readonly number[],
  workload: Workload,
): (AddressChoice | undefined)[] {
  if (workload.framework !== undefined) return meshHopChoices(index, order);
  const k = order.length;
  return order.map((from, r) => index.ringChoice[from * index.n + (order[(r + 1) % k] as number)]);
}

function missingDevice(index: ClusterIndex, node: number, workload: Workload): string[] {
  if (nodeFigures(index, node, workload) !== undefined) return [];
  const device = index.nodes[node]?.device;
  const id = index.ids[node];
  const out: string[] = [];
  if (device?.memoryBandwidthGBps === undefined) out.push(`${id}: memory bandwidth`);
  if (device?.gflops === undefined) out.push(`${id}: gflops`);
  return out;
}

function missingHop(
  index: ClusterIndex,
  from: number,
  to: number,
  workload: Workload,
  last = false,
  choice: AddressChoice | undefined = index.ringChoice[from * index.n + to],
): string[] {
  if (hopBytes(workload, last) === undefined) return ['workload: activationBytesPerToken (or hiddenSize)'];
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
 * (k of them for k ≥ 2) sends the activation of each token, but the last, back to rank 0, carries
 * `returnBytesPerStep` when the workload gives it (a sampled token: a model pipeline sends only that back).
 * A model workload gives `stageBytes` (the real bytes of each stage's tensors): a stage then costs its bytes
 * at the node's per-layer time for bytesPerLayer bytes. A hop is priced over the link it takes
 * (pipelineHopChoices: a framework job's mesh addresses) and adds the framework's hop overhead (hopOverheadMs).
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
    if (per === undefined) unmeasured.push(...missingDevice(index, m, workload));
    if (per === undefined) return undefined;
    return per * (stageBytes ? (stageBytes[r] as number) / workload.bytesPerLayer : (layers[r] as number));
  });
  const hops: (number | undefined)[] = [];
  const choices = k > 1 ? pipelineHopChoices(index, order, workload) : [];
  if (k > 1)
    for (let r = 0; r < k; r++) {
      const from = order[r] as number,
        to = order[(r + 1) % k] as number;
      const last = r === k - 1;
      const ms = hopMs(index, from, to, workload, last, choices[r]);
      if (ms === undefined) unmeasured.push(...missingHop(index, from, to, workload, last, choices[r]));
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
  return finish(step, slowest, workload, objective, breakdown, unmeasured, figuresUsed(index, order, workload));
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
    if (per === undefined) unmeasured.push(...missingDevice(index, m, workload));
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
  return finish(step, step, workload, objective, breakdown, unmeasured, figuresUsed(index, order, workload));
}

function finish(
  step: number | null,
  slowest: number | null,
  workload: Workload,
  objective: Objective,
  breakdown: BreakdownEntry[],
  unmeasured: string[],
  figures: Record<string, string> | undefined,
): Prediction {
  const paceMs = objective === 'throughput' ? slowest : step;
  return {
    stepMs: step === null ? null : round(step),
    periodMs: slowest === null ? null : round(slowest),
    tokensPerS: paceMs === null || paceMs <= 0 ? null : round((workload.tokensPerStep * 1e3) / paceMs),
    objective,
    breakdown,
    unmeasured: [...new Set(unmeasured)],
    ...(figures ? { figures } : {}),
  };
}

/** Lower is better: the step time for latency, the time per step at full pipeline for throughput. */
export function predictionScore(p: Prediction): number | undefined {
  if (p.stepMs === null || p.periodMs === null) return undefined;
  return p.objective === 'throughput' ? p.periodMs : p.stepMs;
}
