/**
 * `torus bench ring --live --gloo` (issue 14's benchmark): after the ring run, torch Gloo's all_reduce on the same
 * nodes, placed as a torus job — so it gets what any user's torch job gets from the plan (RANK, WORLD_SIZE,
 * MASTER_ADDR/PORT, GLOO_SOCKET_IFNAME = the interface of each node's planned address) — timed as the ring is
 * (benchmarks/ring/gloo_rank.py: warm-up, barrier, a timed loop; sent as `python3 -c`, so no file is needed on the
 * nodes), and printed beside the ring's rows with their ratio. The nodes must allow the interpreter (--allow-exec)
 * and have python3-torch; otherwise the result says why and the ring's table stands alone.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { glooScript, glooTable, parseGlooOutput, type GlooResult, type GlooRankRow } from '../ring/bench/gloo.js';
import type { ApiClient } from './api-client.js';
import { renderTable } from './table.js';

export interface LiveGlooRequest {
  readonly nodes: readonly string[];
  readonly sizes: readonly number[];
  readonly warmup: number;
  readonly iters: number;
  /** The interpreter on the nodes (Debian's python3-torch lives under /usr/bin/python3). */
  readonly python: string;
  readonly timeoutMs: number;
}

interface JobView { readonly nodes: string[]; readonly reason?: string; readonly job?: { state: string } }

export async function glooOnCluster(client: ApiClient, req: LiveGlooRequest): Promise<GlooResult> {
  const script = glooScript();
  if (!script) return { ok: false, reason: 'torch Gloo comparison skipped: benchmarks/ring/gloo_rank.py not found' };
  const id = `gloo-bench-${randomBytes(4).toString('hex')}`;
  const config = JSON.stringify({ sizes: req.sizes, warmup: req.warmup, iters: req.iters });
  try {
    await client.request('POST', '/v1/instances', {
      instanceId: id, minNodes: req.nodes.length, requiredNodes: req.nodes,
      workload: { id: 'gloo-all-reduce', kind: 'exec', command: req.python, args: ['-c', readFileSync(script, 'utf8'), config],
        env: { OMP_NUM_THREADS: '1' }, memoryBytes: 1 << 20, layers: req.nodes.length },
    });
  } catch (error) {
    return { ok: false, reason: `torch Gloo comparison skipped: ${(error as Error).message}` };
  }
  try {
    const end = Date.now() + req.timeoutMs;
    let view: JobView;
    for (;;) {
      view = await client.get<JobView>(`/v1/instances/${id}`);
      if (view.job?.state === 'completed' || view.job?.state === 'failed') break;
      if (Date.now() > end) return { ok: false, reason: `torch Gloo run timed out after ${req.timeoutMs} ms` };
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const outputs = await Promise.all(view.nodes.map((_, rank) => textOf(client, `/v1/instances/${id}/logs?rank=${rank}&stream=stdout`)));
    const parsed = outputs.map(parseGlooOutput);
    const errors = parsed.flatMap((p, rank) => p.errors.map((e) => `rank ${rank}: ${e}`));
    if (view.job?.state === 'failed' || errors.length > 0) return { ok: false, reason: `torch Gloo run failed: ${errors.slice(0, 2).join('; ') || view.reason || 'a rank failed'}` };
    const perRank: GlooRankRow[][] = parsed.map((p) => p.rows);
    return { ok: true, python: req.python, torch: 'on the nodes', iface: 'the planned interface (GLOO_SOCKET_IFNAME)', rows: glooTable(perRank) };
  } finally {
    await client.request('DELETE', `/v1/instances/${id}`).catch(() => undefined);
  }
}

async function textOf(client: ApiClient, path: string): Promise<string> {
  const res = await fetch(client.url(path), { headers: client.authHeaders, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return text;
}

/** Ring all-reduce rows beside Gloo's at the same sizes: busbw of each (GB/s) and ring ÷ Gloo. */
export function renderSideBySide(ringRows: readonly { op: string; size: number; busbw: number }[], gloo: GlooResult): string {
  if (!gloo.ok) return `# ${gloo.reason}\n`;
  const byBytes = new Map(gloo.rows.map((r) => [r.bytes, r]));
  const body = ringRows.filter((r) => r.op === 'all-reduce' && byBytes.has(r.size)).map((r) => {
    const g = byBytes.get(r.size)!;
    return [String(r.size), r.busbw.toFixed(3), g.busbw.toFixed(3), g.busbw > 0 ? `${(r.busbw / g.busbw).toFixed(2)}×` : '-'];
  });
  return `# ring vs torch Gloo all_reduce on the same nodes (a torus job; ${gloo.iface})\n` + renderTable(['size', 'ring busbw', 'gloo busbw', 'ring/gloo'], body);
}
