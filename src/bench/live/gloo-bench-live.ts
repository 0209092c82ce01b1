/**
 * The torch Gloo side of POST /v1/bench/ring with `gloo: true`: after the ring, torch Gloo's
 * all_reduce on the same nodes, placed as an ordinary `exec` job — so it gets what any user's torch job gets from
 * the plan (RANK, WORLD_SIZE, MASTER_ADDR/PORT, GLOO_SOCKET_IFNAME = the interface of each node's planned address)
 * — timed as the ring is (benchmarks/ring/gloo_rank.py: warm-up, barrier, a timed loop), and returned beside the
 * ring's rows with their ratio.
 *
 * Security (docs/security.md, "exec"): the request names no code. The job is this node's own copy of gloo_rank.py,
 * sent as `PYTHON -c SCRIPT CONFIG`, where CONFIG is JSON built here from the validated sizes and counts. It is
 * placed like any exec job, so every node's `--allow-exec` decides, twice (the leader's placement filter and the
 * runner supervisor at spawn). `glooRefusal` checks the same policy before the ring runs, so a refused request
 * is a 409 that starts nothing instead of minutes of ring followed by a refusal.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { InstanceView, NodeFacade } from '../../api/node-facade.js';
import { TorusError } from '../../protocols/errors.js';
import { ineligibleNodes } from '../../actors/placement-planner/leader/runner-eligibility.js';
import type { ClusterState } from '../../actors/topology-keeper/state.js';
import type { WorkloadSpec } from '../../protocols/events.js';
import { glooScript, glooTable, parseGlooOutput, type GlooRankRow, type GlooResult } from '../ring/gloo.js';

/** Debian's python3-torch lives under /usr/bin/python3 (a `python3` on PATH may be a pyenv without torch). */
export const DEFAULT_GLOO_PYTHON = '/usr/bin/python3';
const POLL_MS = 500;

export type GlooFacade = Pick<NodeFacade, 'createInstance' | 'getInstance' | 'deleteInstance' | 'runnerLog'>;

export interface GlooBenchRequest {
  readonly nodes: readonly string[];
  readonly sizes: readonly number[];
  readonly warmup: number;
  readonly iters: number;
  readonly python: string;
  readonly timeoutMs: number;
}

/** The exec workload of the Gloo job (the policy check and the placement use the same one). */
function glooWorkload(python: string, args: readonly string[], nodes: number): WorkloadSpec {
  return {
    id: 'gloo-all-reduce',
    kind: 'exec',
    command: python,
    args: [...args],
    env: { OMP_NUM_THREADS: '1' },
    memoryBytes: 1 << 20,
    layers: Math.max(1, nodes),
  } as WorkloadSpec;
}

/**
 * Throws TORUS_PLACEMENT_REFUSED (409) naming each bench node that would refuse the Gloo job (its `--allow-exec`
 * does not admit the interpreter, or it is at its runner quota), before anything runs.
 */
export function glooRefusal(state: ClusterState, nodes: readonly string[], python: string): void {
  const wanted = new Set(nodes);
  const refused = ineligibleNodes(state, glooWorkload(python, [], nodes.length)).filter((e) => wanted.has(e.node));
  if (refused.length === 0) return;
  throw new TorusError(
    'TORUS_PLACEMENT_REFUSED',
    `gloo: the torch Gloo job cannot run on every bench node: ${refused.map((e) => e.reason).join('; ')}`,
    { refused },
  );
}

/** Places the Gloo job on `nodes`, waits for it to end (bounded), reads every rank's stdout, deletes the job. */
export async function glooOnNodes(facade: GlooFacade, req: GlooBenchRequest): Promise<GlooResult> {
  const script = glooScript();
  if (!script)
    return {
      ok: false,
      reason: 'torch Gloo comparison skipped: benchmarks/ring/gloo_rank.py is not installed beside this node',
    };
  const instanceId = `gloo-bench-${randomBytes(4).toString('hex')}`;
  const config = JSON.stringify({ sizes: req.sizes, warmup: req.warmup, iters: req.iters });
  try {
    await facade.createInstance({
      instanceId,
      minNodes: req.nodes.length,
      requiredNodes: req.nodes,
      workload: glooWorkload(req.python, ['-c', readFileSync(script, 'utf8'), config], req.nodes.length),
    });
  } catch (error) {
    return { ok: false, reason: `torch Gloo job refused: ${(error as Error).message}` };
  }
  try {
    const end = Date.now() + req.timeoutMs;
    let view: InstanceView;
    for (;;) {
      view = await facade.getInstance(instanceId);
      const state = (view.job as { state?: string } | undefined)?.state;
      if (state === 'completed' || state === 'failed') break;
      if (Date.now() > end) return { ok: false, reason: `torch Gloo run timed out after ${req.timeoutMs} ms` };
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const outputs = await Promise.all(view.nodes.map((_, rank) => logText(facade, instanceId, rank)));
    const parsed = outputs.map(parseGlooOutput);
    const errors = parsed.flatMap((p, rank) => p.errors.map((e) => `rank ${rank}: ${e}`));
    const failed = (view.job as { state?: string } | undefined)?.state === 'failed';
    if (failed || errors.length > 0)
      return {
        ok: false,
        reason: `torch Gloo run failed: ${errors.slice(0, 2).join('; ') || String(view.reason ?? 'a rank failed')}`,
      };
    const perRank: GlooRankRow[][] = parsed.map((p) => p.rows);
    return {
      ok: true,
      python: req.python,
      torch: 'on the nodes',
      iface: 'the planned interface (GLOO_SOCKET_IFNAME)',
      rows: glooTable(perRank),
    };
  } finally {
    await facade.deleteInstance(instanceId).catch(() => undefined);
  }
}

/** A finished rank's whole stdout (from whichever node holds it). */
async function logText(facade: GlooFacade, instanceId: string, rank: number): Promise<string> {
  if (!facade.runnerLog) throw new TorusError('TORUS_INTERNAL', 'runner logs are not available on this node');
  const chunks = await facade.runnerLog(
    { instanceId, rank, stream: 'stdout', follow: false },
    AbortSignal.timeout(30_000),
  );
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts).toString('utf8');
}

/** Ring all-reduce busbw beside Gloo's at each size Gloo timed: what the CLI table, the dashboard and scripts read. */
export interface GlooComparison {
  readonly size: number;
  readonly ringBusbw: number;
  readonly glooBusbw: number;
  readonly ratio: number | null;
}

export function compareWithGloo(
  ringRows: readonly { op: string; size: number; busbw: number }[],
  gloo: GlooResult,
): GlooComparison[] {
  if (!gloo.ok) return [];
  const byBytes = new Map(gloo.rows.map((r) => [r.bytes, r.busbw]));
  return ringRows
    .filter((r) => r.op === 'all-reduce' && byBytes.has(r.size))
    .map((r) => {
      const g = byBytes.get(r.size)!;
      return { size: r.size, ringBusbw: r.busbw, glooBusbw: g, ratio: g > 0 ? r.busbw / g : null };
    });
}
