// @ts-check
// Placement options with their predicted speed: POST /v1/placements/preview for a workload the user describes,
// one row per feasible option (sharding × backend × node count) with the cost model's predicted step time and
// tokens/s; the fastest is marked, as the planner would choose it. After `bench pipeline` (POST
// /v1/bench/pipeline) the measured figure is shown beside the option it ran on.
/** @typedef {{ stepMs: number | null, tokensPerS: number | null, periodMs: number | null, objective: string, unmeasured: string[], figures?: Record<string, string> }} Predicted */
/** @typedef {{ sharding: string, backend: string, nodeCount: number, plan?: { instance: { nodes: string[] }, predicted: Predicted }, refusal?: { message: string } }} Option */

import { el } from './dom.js';

/** @type {{ nodes: string, measuredTokensPerS: number | null, measuredStepMs: number | null } | undefined} */
let lastBench;

/** @param {{ nodes: string[], measured: { tokensPerS: number | null, stepMs: number | null } }} result */
export function noteBenchPipeline(result) {
  lastBench = {
    nodes: [...result.nodes].sort().join(','),
    measuredTokensPerS: result.measured.tokensPerS,
    measuredStepMs: result.measured.stepMs,
  };
}

/**
 * @param {HTMLElement} table where the rows go
 * @param {Option[]} options
 * @param {(id: string) => string} nameOf
 */
export function drawPreviews(table, options, nameOf) {
  table.replaceChildren();
  const head = el('tr');
  for (const h of ['', 'sharding', 'backend', 'nodes', 'predicted step', 'predicted tokens/s', 'measured'])
    head.append(el('th', {}, h));
  table.append(head);
  const feasible = options.filter((o) => o.plan);
  let best = -1;
  feasible.forEach((o, i) => {
    const p = o.plan?.predicted;
    const b = best >= 0 ? feasible[best]?.plan?.predicted : undefined;
    if (p && p.tokensPerS !== null && (!b || b.tokensPerS === null || p.tokensPerS > b.tokensPerS)) best = i;
  });
  feasible.forEach((o, i) => {
    const plan = /** @type {NonNullable<Option['plan']>} */ (o.plan);
    const p = plan.predicted;
    const key = [...plan.instance.nodes].sort().join(',');
    const measured =
      lastBench && lastBench.nodes === key && o.sharding === 'pipeline' && o.backend === 'ring'
        ? `${lastBench.measuredTokensPerS ?? '?'} tokens/s (${lastBench.measuredStepMs ?? '?'} ms)`
        : '';
    const row = el('tr', { class: i === best ? 'chosen' : '', 'data-testid': 'preview-option' });
    row.append(el('td', {}, i === best ? '★ chosen' : ''));
    row.append(el('td', {}, o.sharding));
    row.append(el('td', {}, o.backend));
    // With a framework named, say which figures predicted each node (its calibration or torus's kernels).
    const figures = p.figures
      ? Object.entries(p.figures)
          .map(([n, f]) => `${nameOf(n)}: ${f}`)
          .join('\n')
      : '';
    row.append(el('td', figures ? { title: figures } : {}, plan.instance.nodes.map(nameOf).join(' → ')));
    row.append(el('td', {}, p.stepMs === null ? `? (${p.unmeasured.length} unmeasured)` : `${p.stepMs.toFixed(1)} ms`));
    row.append(el('td', {}, p.tokensPerS === null ? '?' : p.tokensPerS.toFixed(2)));
    row.append(el('td', {}, measured));
    table.append(row);
  });
  if (feasible.length === 0) {
    const row = el('tr');
    row.append(el('td', { colspan: 7 }, options[0]?.refusal?.message ?? 'no feasible option'));
    table.append(row);
  }
}

/**
 * @param {{ memoryBytes: number, layers: number, hiddenSize: number, tokensPerStep: number }} w
 * @returns {Promise<Option[]>}
 */
export async function fetchPreviews(w) {
  const res = await fetch('/v1/placements/preview', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workload: { id: 'dashboard-preview', ...w } }),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(body?.error?.message ?? `preview failed: ${res.status}`);
  return body.previews;
}
