/**
 * One run of the torch pipeline job (pipeline_job.py) under `torus run --model ID [--nodes …]` from host 0's
 * namespace, read back from what the ranks printed: the step times of the last rank (warm-up steps dropped, median
 * of the rest), each rank's node and layers, and whether each stage's hidden states crossed the Gloo pair between
 * the plan's mesh addresses of its node and the next rank's (the kernel's byte counts, TCP_INFO).
 */
import type { NodeCluster } from '../../src/lab/index.js';
import { median } from '../placement-quality/lab-stats.js';

export interface JobShape {
  /** pipeline_job.py's path on every node */
  readonly script: string;
  readonly promptTokens: number;
  /** prefills run; the first is the warm-up, the median of the rest is the prefill figure */
  readonly prefills: number;
  /** decode steps run; the first `warmup` are dropped */
  readonly decodeSteps: number;
  readonly warmup: number;
}

export interface RankSeen {
  readonly rank: number;
  readonly node: string;
  readonly layers: readonly [number, number];
  /** where its layers came from (pipeline_job.py's `source`: TORUS_MODEL_DIR under a model artifact) */
  readonly source: string;
  /** bytes it sent to the next rank's planned address on a Gloo pair (the last rank: to rank 0) */
  readonly sentToNext: number;
  /** what it had to send there at least: every position's hidden states (the last rank: one token a step) */
  readonly expected: number;
}

export interface TorchRun {
  readonly instanceId: string;
  /** the plan's rank order */
  readonly nodes: readonly string[];
  readonly decodeMs: number;
  readonly prefillMs: number;
  readonly ranks: readonly RankSeen[];
  /** every rank ran on its planned node and sent what it had to over the planned addresses */
  readonly overPlannedAddresses: boolean;
}

type Line = Record<string, unknown>;

/** `[rank N node] {json}` lines (torus run's prefix) by rank; node names as printed. */
export function linesByRank(stdout: string): { lines: Map<number, Line[]>; names: Map<number, string> } {
  const lines = new Map<number, Line[]>();
  const names = new Map<number, string>();
  for (const l of stdout.split('\n')) {
    const m = /^\[rank (\d+) (\S+)\] (\{.*\})$/.exec(l);
    if (!m) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(m[3]!);
    } catch {
      continue; // a rank's own output that merely looks like JSON
    }
    if (typeof parsed !== 'object' || parsed === null) continue;
    const r = Number(m[1]);
    names.set(r, m[2]!);
    lines.set(r, [...(lines.get(r) ?? []), parsed as Line]);
  }
  return { lines, names };
}

interface PlanView {
  plan?: { nodes?: string[]; meshAddresses?: Record<string, string> };
}

let runs = 0;

/**
 * Runs the job on `nodes` (pinned, rank 0 first) or where the planner puts it (`nodes` undefined). A run that fails,
 * or whose output lacks a step, throws: a benchmark option that did not run is not a figure.
 */
export async function runTorch(
  c: NodeCluster,
  modelId: string,
  nodes: readonly string[] | undefined,
  job: JobShape,
  hiddenSize: number,
): Promise<TorchRun> {
  const instanceId = `model-placement-${process.pid}-${++runs}`;
  const args = [
    'run',
    '--model',
    modelId,
    ...(nodes ? ['--nodes', nodes.join(',')] : []),
    '--instance-id',
    instanceId,
    '--',
    '/usr/bin/python3',
    job.script,
    '--prompt-tokens',
    String(job.promptTokens),
    '--prefills',
    String(job.prefills),
    '--decode-steps',
    String(job.decodeSteps),
  ];
  const out = await c.cli(0, args, 600_000);
  const where = nodes ? nodes.join(',') : 'the planner’s choice';
  if (out.code !== 0) throw new Error(`torus run on ${where} exited ${out.code}: ${out.stderr.slice(-800)}`);
  const view = await c.nodes[0]!.tryGet<PlanView>(`/v1/instances/${instanceId}`, 10_000);
  const planned = view?.plan?.nodes;
  const mesh = view?.plan?.meshAddresses ?? {};
  if (!planned) throw new Error(`instance ${instanceId}: no plan in its view`);
  const { lines } = linesByRank(out.stdout);
  const last = lines.get(planned.length - 1) ?? [];
  const stepsOf = (kind: string): number[] =>
    last.filter((l) => l.event === 'step' && l.kind === kind).map((l) => Number(l.stepMs));
  const prefills = stepsOf('prefill').slice(1);
  const decodes = stepsOf('decode').slice(job.warmup);
  if (prefills.length === 0 || decodes.length === 0 || [...prefills, ...decodes].some((x) => !Number.isFinite(x)))
    throw new Error(`torus run on ${where}: the last rank printed no timed steps: ${out.stdout.slice(-600)}`);
  const positions = job.prefills * job.promptTokens + job.decodeSteps;
  const ranks: RankSeen[] = planned.map((node, r) => {
    const own = lines.get(r) ?? [];
    const stage = own.find((l) => l.event === 'stage') ?? {};
    const next = planned[(r + 1) % planned.length]!;
    const links = (own.find((l) => l.event === 'links')?.links ?? []) as Line[];
    const pair = links.find(
      (l) =>
        !l.store &&
        String(l.local).startsWith(`${mesh[node]}:`) &&
        String(l.remote).startsWith(`${mesh[next]}:`) &&
        typeof l.sent === 'number',
    );
    const layers = (Array.isArray(stage.layers) ? stage.layers : [NaN, NaN]) as [number, number];
    return {
      rank: r,
      node,
      layers,
      source: String(stage.source ?? ''),
      sentToNext: (pair?.sent as number | undefined) ?? 0,
      expected: r === planned.length - 1 ? (job.prefills + job.decodeSteps - 1) * 8 : positions * hiddenSize * 2,
    };
  });
  const ranOnPlan = [...lines.keys()].length === planned.length && (!nodes || nodes.join() === planned.join());
  return {
    instanceId,
    nodes: planned,
    decodeMs: median(decodes),
    prefillMs: median(prefills),
    ranks,
    overPlannedAddresses:
      ranOnPlan && (planned.length === 1 || ranks.every((r) => r.sentToNext >= r.expected && mesh[r.node])),
  };
}
