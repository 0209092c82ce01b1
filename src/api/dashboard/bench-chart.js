// @ts-check
// The ring benchmark as a chart: bus bandwidth against message size, one line per run (POST
// /v1/bench/ring, `bench ring --live`), and the ring's measured link capacity as a reference line: the slowest hop
// of the ring, taking the fastest measured link of each hop (the profiler's capacity probe, within a few % of
// iperf3, docs/profiler.md). busbw is nccl-tests' GB/s (1e9 B/s); a ring all-reduce at the link's limit reaches the
// link's rate in bytes. A run that asked for the torch Gloo comparison (`gloo: true`) also gets a dashed line of
// Gloo's all_reduce busbw on the same nodes, in the run's colour.
/** @typedef {import('../node-facade.js').TopologyView} TopologyView */
/** @typedef {{ op: string, size: number, busbw: number }} BenchRow */
/**
 * GET /v1/bench/ring/:id and the `bench` SSE notice (src/api/routes/bench-routes.ts).
 * @typedef {{ id: string, status: string, startedAt: number, progress?: { done: number, total: number, row?: unknown }, result?: unknown, error?: { message?: string } }} BenchRun
 */
/** @typedef {{ run: BenchRun, rows: BenchRow[], gloo: BenchRow[] }} Series */

import { bytesText, bandwidthText, el } from './dom.js';

const KEEP = 8;
const COLOURS = ['#1c7ed6', '#e8590c', '#2f9e44', '#ae3ec9', '#f08c00', '#0c8599', '#c2255c', '#5c940d'];
const W = 640,
  H = 300,
  LEFT = 56,
  RIGHT = 16,
  TOP = 14,
  BOTTOM = 40;

/** Runs by id, oldest first. @type {Map<string, Series>} */
const runs = new Map();

/** @param {unknown} v @returns {v is BenchRow} */
const isRow = (v) =>
  !!v &&
  typeof v === 'object' &&
  typeof (/** @type {BenchRow} */ (v).size) === 'number' &&
  typeof (/** @type {BenchRow} */ (v).busbw) === 'number';

/**
 * Records a run as the API reports it: the final table when there is one, else the rows as they are reported one
 * by one in progress notices.
 * @param {BenchRun} run
 */
export function noteBenchRun(run) {
  const series = runs.get(run.id) ?? { run, rows: [], gloo: [] };
  series.run = run;
  const result =
    /** @type {{ rows?: unknown[], gloo?: { ok?: boolean, rows?: { bytes: number, busbw: number }[] } } | undefined} */ (
      run.result
    );
  if (result?.gloo?.ok && Array.isArray(result.gloo.rows)) {
    series.gloo = result.gloo.rows
      .map((r) => ({ op: 'gloo all_reduce', size: r.bytes, busbw: r.busbw }))
      .filter(isRow)
      .sort((a, b) => a.size - b.size);
  }
  if (result && Array.isArray(result.rows)) series.rows = result.rows.filter(isRow);
  else {
    const row = run.progress?.row;
    if (isRow(row) && !series.rows.some((r) => r.op === row.op && r.size === row.size)) series.rows.push(row);
  }
  runs.set(run.id, series);
  while (runs.size > KEEP) runs.delete(/** @type {string} */ (runs.keys().next().value));
}

/** The ring's node order, from a run's result. @param {BenchRun} run @returns {string[] | undefined} */
function ringOf(run) {
  const ring = /** @type {{ ring?: unknown } | undefined} */ (run.result)?.ring;
  return Array.isArray(ring) && ring.every((n) => typeof n === 'string') ? ring : undefined;
}

/**
 * The slowest hop of the ring, each hop at its fastest measured link (either direction), in bit/s.
 * @param {readonly string[]} ring @param {TopologyView} topology @returns {number | undefined}
 */
export function ringCapacityBps(ring, topology) {
  if (ring.length < 2) return undefined;
  let slowest = Infinity;
  for (const [i, a] of ring.entries()) {
    const b = ring[(i + 1) % ring.length];
    const rates = topology.links
      .filter((l) => (l.source === a && l.sink === b) || (l.source === b && l.sink === a))
      .map((l) => l.bandwidthBps)
      .filter((x) => typeof x === 'number');
    if (rates.length === 0) return undefined;
    slowest = Math.min(slowest, Math.max(.../** @type {number[]} */ (rates)));
  }
  return slowest;
}

/** A round axis maximum: 1, 2 or 5 × 10^k at or above `v`. @param {number} v */
function niceCeil(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 5, 10].find((m) => m * p >= v) ?? 10) * p;
}

/** The rows a run is drawn from: its all-reduce rows (else its first op's), by size. @param {Series} s */
function lineRows(s) {
  const op = s.rows.some((r) => r.op === 'all-reduce') ? 'all-reduce' : s.rows[0]?.op;
  return s.rows.filter((r) => r.op === op).sort((a, b) => a.size - b.size);
}

/**
 * Draws every known run into `svg` and its legend into `legend`.
 * @param {Element} svg @param {HTMLElement} legend @param {TopologyView} topology
 */
export function drawBench(svg, legend, topology) {
  svg.replaceChildren();
  legend.replaceChildren();
  const series = [...runs.values()].filter((s) => lineRows(s).length > 0);
  if (series.length === 0) {
    svg.append(
      el(
        'text',
        { x: W / 2, y: H / 2, class: 'chart-empty' },
        'no benchmark run yet (bench ring --live, or POST /v1/bench/ring)',
      ),
    );
    return;
  }
  const newest = [...runs.values()].reverse().find((s) => ringOf(s.run));
  const ring = newest ? ringOf(newest.run) : undefined;
  const capacityBps = ringCapacityBps(ring ?? topology.nodes.map((n) => n.id), topology);
  const capacity = capacityBps === undefined ? undefined : capacityBps / 8 / 1e9; // GB/s, as busbw
  const all = series.flatMap((s) => [...lineRows(s), ...s.gloo]);
  const sizes = [...new Set(all.map((r) => r.size))].sort((a, b) => a - b);
  const lo = Math.log2(sizes[0] ?? 1),
    hi = Math.max(lo + 1, Math.log2(sizes.at(-1) ?? 2));
  const top = niceCeil(Math.max(capacity ?? 0, ...all.map((r) => r.busbw)) * 1.05);
  /** @param {number} size */
  const x = (size) => LEFT + ((Math.log2(size) - lo) / (hi - lo)) * (W - LEFT - RIGHT);
  /** @param {number} v */
  const y = (v) => TOP + (1 - v / top) * (H - TOP - BOTTOM);

  const axes = el('g', { class: 'axes' });
  for (let i = 0; i <= 4; i++) {
    const v = (top * i) / 4;
    axes.append(el('line', { x1: LEFT, x2: W - RIGHT, y1: y(v), y2: y(v), class: 'grid' }));
    axes.append(el('text', { x: LEFT - 6, y: y(v) + 4, class: 'tick y' }, v >= 10 ? v.toFixed(0) : v.toFixed(2)));
  }
  const every = Math.ceil(sizes.length / 8);
  sizes.forEach((size, i) => {
    if (i % every === 0) axes.append(el('text', { x: x(size), y: H - BOTTOM + 16, class: 'tick x' }, bytesText(size)));
  });
  axes.append(el('text', { x: (LEFT + W - RIGHT) / 2, y: H - 4, class: 'axis-label' }, 'message size'));
  axes.append(
    el(
      'text',
      { x: 12, y: (TOP + H - BOTTOM) / 2, class: 'axis-label', transform: `rotate(-90 12 ${(TOP + H - BOTTOM) / 2})` },
      'bus bandwidth (GB/s)',
    ),
  );
  svg.append(axes);

  if (capacity !== undefined && capacityBps !== undefined) {
    const ref = el('g', { class: 'reference', 'data-testid': 'bench-reference', 'data-gbps': capacity.toFixed(4) });
    ref.append(el('line', { x1: LEFT, x2: W - RIGHT, y1: y(capacity), y2: y(capacity) }));
    ref.append(
      el(
        'text',
        { x: W - RIGHT - 4, y: y(capacity) - 5 },
        `link capacity ${bandwidthText(capacityBps)} (measured, slowest ring hop)`,
      ),
    );
    svg.append(ref);
  }
  series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length] ?? '#1c7ed6';
    const rows = lineRows(s);
    const g = el('g', {
      class: 'run',
      'data-testid': 'bench-line',
      'data-run': s.run.id,
      'data-points': rows.length,
      style: `color: ${colour}`,
    });
    g.append(el('polyline', { points: rows.map((r) => `${x(r.size).toFixed(1)},${y(r.busbw).toFixed(1)}`).join(' ') }));
    for (const r of rows) {
      const dot = el('circle', { cx: x(r.size), cy: y(r.busbw), r: 3 });
      dot.append(el('title', {}, `${bytesText(r.size)}: ${r.busbw.toFixed(3)} GB/s`));
      g.append(dot);
    }
    svg.append(g);
    if (s.gloo.length > 0) {
      const gl = el('g', {
        class: 'run gloo',
        'data-testid': 'bench-gloo-line',
        'data-run': s.run.id,
        'data-points': s.gloo.length,
        style: `color: ${colour}`,
      });
      gl.append(
        el('polyline', {
          points: s.gloo.map((r) => `${x(r.size).toFixed(1)},${y(r.busbw).toFixed(1)}`).join(' '),
          'stroke-dasharray': '6 4',
        }),
      );
      for (const r of s.gloo) {
        const dot = el('circle', { cx: x(r.size), cy: y(r.busbw), r: 2.5 });
        dot.append(el('title', {}, `torch Gloo ${bytesText(r.size)}: ${r.busbw.toFixed(3)} GB/s`));
        gl.append(dot);
      }
      svg.append(gl);
    }
    const item = el('li', { 'data-run': s.run.id, style: `color: ${colour}` });
    const large = rows.filter((r) => r.size >= 8 * 2 ** 20);
    const best = Math.max(...rows.map((r) => r.busbw));
    item.append(
      el(
        'span',
        {},
        `${new Date(s.run.startedAt).toLocaleTimeString()} · ${s.run.status} · ${rows[0]?.op ?? ''} · peak ${best.toFixed(3)} GB/s` +
          (large.length
            ? ` · ≥ 8 MiB ${(large.reduce((t, r) => t + r.busbw, 0) / large.length).toFixed(3)} GB/s`
            : '') +
          (capacity ? ` · ${(best / capacity).toFixed(2)}× link` : '') +
          glooText(rows, s.gloo),
      ),
    );
    legend.append(item);
  });
}

/**
 * The legend's Gloo part: mean ring ÷ Gloo over the sizes both timed (dashed line), or nothing without Gloo rows.
 * @param {BenchRow[]} rows @param {BenchRow[]} gloo @returns {string}
 */
function glooText(rows, gloo) {
  const ratios = gloo.flatMap((g) => {
    const ring = rows.find((r) => r.size === g.size)?.busbw;
    return ring !== undefined && g.busbw > 0 ? [ring / g.busbw] : [];
  });
  if (ratios.length === 0) return gloo.length ? ' · torch Gloo (dashed)' : '';
  return ` · torch Gloo (dashed): ring ${(ratios.reduce((t, v) => t + v, 0) / ratios.length).toFixed(2)}× Gloo`;
}
