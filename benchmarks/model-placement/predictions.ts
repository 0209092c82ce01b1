/**
 * What torus predicts for the model-placement benchmark, through the API of host 0's node: the served OpenAPI
 * document says whether the node can calibrate torch figures (POST /v1/calibrations) and take
 * `workload.framework`; pinned previews (POST /v1/placements/preview with `nodes`) give the cost model's step time
 * of exactly one order; a placement without `nodes` gives the planner's own choice. pipeline_job.py's last stage
 * sends rank 0 only the sampled token (an int64), so the workload says so (`returnBytesPerStep`) where it is served.
 */
import { existsSync } from 'node:fs';
import type { NodeCluster, NodeProcess } from '../../src/lab/index.js';

export interface Served {
  /** POST /v1/calibrations is served */
  readonly calibrations: boolean;
  /** a workload schema has a `framework` property */
  readonly framework: boolean;
  /** a workload schema has a `returnBytesPerStep` property */
  readonly returnBytes: boolean;
}

/** True when some schema in `doc` has `properties[field]`. */
function hasWorkloadField(doc: unknown, field: string): boolean {
  if (typeof doc !== 'object' || doc === null) return false;
  const props = (doc as { properties?: Record<string, unknown> }).properties;
  if (props && typeof props === 'object' && field in props) return true;
  return Object.values(doc).some((v) => hasWorkloadField(v, field));
}

export async function servedFeatures(n: NodeProcess): Promise<Served> {
  const res = await n.fetch('/v1/openapi.json');
  if (res.status !== 200) throw new Error(`GET /v1/openapi.json: ${res.status}`);
  const doc = (await res.json()) as { paths?: Record<string, { post?: unknown }> };
  return {
    calibrations: Boolean(doc.paths?.['/v1/calibrations']?.post),
    framework: hasWorkloadField(doc, 'framework'),
    returnBytes: hasWorkloadField(doc, 'returnBytesPerStep'),
  };
}

export interface Calibrated {
  readonly node: string;
  readonly seconds: number;
  /** the hop overhead the node recorded (absent: a script or node without it) */
  readonly hopOverheadMs?: number;
}

/**
 * Calibrates torch figures on every node, one at a time so that each one's time is its own (and the nodes do not
 * share the CPUs while they measure). Undefined, with the reason printed, when the node cannot or the script is absent.
 */
export async function calibrate(
  c: NodeCluster,
  served: Served,
  command: readonly string[],
  say: (line: string) => void,
): Promise<Calibrated[] | undefined> {
  if (!served.calibrations) {
    say('no calibration: torus kernel figures (this node serves no POST /v1/calibrations)');
    return undefined;
  }
  const script = command.find((a) => a.endsWith('.py'));
  if (script && !existsSync(script)) {
    say(`no calibration: torus kernel figures (no calibration script at ${script})`);
    return undefined;
  }
  const out: Calibrated[] = [];
  for (const n of c.nodes) {
    const t0 = Date.now();
    const res = await n.fetch('/v1/calibrations', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ framework: 'torch', command, nodes: [n.id] }),
    });
    if (res.status >= 300) throw new Error(`h${n.host}: POST /v1/calibrations ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { results?: { figures?: { hopOverheadMs?: number } }[] };
    const hop = body.results?.[0]?.figures?.hopOverheadMs;
    out.push({
      node: n.id as string,
      seconds: (Date.now() - t0) / 1000,
      ...(hop !== undefined ? { hopOverheadMs: hop } : {}),
    });
  }
  const hops = out.map((x) => x.hopOverheadMs);
  say(
    `torch calibration per node: ${out.map((x, i) => `h${i} ${x.seconds.toFixed(1)} s`).join(', ')} (target ≤ 10 s)` +
      (hops.every((h) => h !== undefined) ? `; hop overhead ${hops.map((h) => `${h.toFixed(2)}`).join('/')} ms` : ''),
  );
  return out;
}

export interface StepWorkload {
  readonly id: string;
  readonly model: string;
  readonly tokensPerStep: number;
  readonly framework?: 'torch';
  readonly returnBytesPerStep?: number;
}

/** What pipeline_job.py's last stage sends back to rank 0 each step: one int64 token id. */
const SAMPLED_TOKEN_BYTES = 8;

export const stepWorkload = (model: string, tokensPerStep: number, served: Served): StepWorkload => ({
  id: `model-placement-${tokensPerStep}`,
  model,
  tokensPerStep,
  ...(served.framework ? { framework: 'torch' as const } : {}),
  ...(served.returnBytes ? { returnBytesPerStep: SAMPLED_TOKEN_BYTES } : {}),
});

export interface PinnedPrediction {
  readonly nodes: readonly string[];
  readonly layers: readonly number[];
  readonly stepMs: number | null;
}

interface PreviewPlan {
  instance: { nodes: string[]; shards: { rank: number; startLayer: number; endLayer: number }[] };
  predicted: { stepMs: number | null };
}

/** The cost model's pipeline/ring prediction for exactly `nodes` in that order; undefined when the planner refuses it. */
export async function predictPinned(
  n: NodeProcess,
  workload: StepWorkload,
  nodes: readonly string[],
): Promise<PinnedPrediction | undefined> {
  const res = await n.fetch('/v1/placements/preview', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workload, nodes }),
  });
  if (res.status === 409) return undefined;
  const body = (await res.json()) as {
    previews?: { sharding: string; backend: string; plan?: PreviewPlan }[];
    error?: { message: string };
  };
  if (res.status !== 200) throw new Error(`preview ${nodes.join(',')}: ${res.status} ${body.error?.message}`);
  const plan = body.previews?.find((p) => p.sharding === 'pipeline' && p.backend === 'ring')?.plan;
  if (!plan) return undefined;
  const layers = [...plan.instance.shards].sort((a, b) => a.rank - b.rank).map((s) => s.endLayer - s.startLayer);
  return { nodes: plan.instance.nodes, layers, stepMs: plan.predicted.stepMs };
}

/**
 * The planner's own choice for `workload`: the nodes of an instance it places without `nodes` (a job that exits at
 * once), deleted again. `torus run` takes no token count, so this is how a prefill's choice is learnt.
 */
export async function plannerChoice(n: NodeProcess, workload: StepWorkload): Promise<string[]> {
  const res = await n.fetch('/v1/instances', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      workload: { ...workload, kind: 'exec', command: '/usr/bin/python3', args: ['-c', 'pass'] },
      minNodes: 1,
    }),
  });
  const body = (await res.json()) as { id?: string; nodes?: string[]; error?: { message: string } };
  if (res.status !== 201 || !body.id || !body.nodes)
    throw new Error(`the planner's choice for ${workload.tokensPerStep} tokens: ${res.status} ${body.error?.message}`);
  const del = await n.fetch(`/v1/instances/${encodeURIComponent(body.id)}`, { method: 'DELETE' });
  if (del.status >= 300 && del.status !== 404) throw new Error(`delete ${body.id}: ${del.status}`);
  return body.nodes;
}
