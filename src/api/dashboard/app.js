// @ts-check
// torus dashboard: vanilla JS, no build step. Reads the node's API (same origin) and stays live over the
// /v1/events stream: every applied event is listed, and triggers a (debounced) refetch of the views, so the
// page never has to re-implement how events change the state.
// Type-checked (tsconfig.dashboard.json: checkJs, DOM lib, no Node types) against the API's own view types.
/** @typedef {import('../node-facade.js').NodeInfo} NodeInfo */
/** @typedef {import('../node-facade.js').TopologyView} TopologyView */
/** @typedef {import('../node-facade.js').TopologyNodeView} TopologyNodeView */
/** @typedef {import('../node-facade.js').TopologyLinkView} TopologyLinkView */
/** @typedef {import('../node-facade.js').InstanceView} InstanceView */
/** @typedef {import('../node-facade.js').IndexedEvent} IndexedEvent */
/** @typedef {import('./bench-chart.js').BenchRun} BenchRunEvent the `bench` event's data: the run (src/api/routes/bench-routes.ts) */
/** @typedef {{ x: number, y: number }} Point */

import { $, bandwidthText, el } from './dom.js';
import { drawJobs, refreshTails } from './jobs.js';
import { drawBench, noteBenchRun } from './bench-chart.js';
import { drawPreviews, fetchPreviews, noteBenchPipeline } from './previews.js';

/** @type {{ node: NodeInfo | null, topology: TopologyView, instances: readonly InstanceView[], lastIndex: number }} */
const view = { node: null, topology: { nodes: [], links: [] }, instances: [], lastIndex: 0 };
/** @type {IndexedEvent[]} */
const recent = [];
const MAX_EVENTS = 50;

/**
 * @param {string} path
 * @returns {Promise<any>} the parsed answer; each caller names the view type it reads
 */
async function getJson(path) {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  // The session ended (expired, or the node restarted: sessions live in its memory): sign in again.
  if (res.status === 401) {
    location.assign('/login');
    throw new Error('signed out');
  }
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return res.json();
}

/** @param {number} bytes */
const gib = (bytes) => (bytes / 2 ** 30).toFixed(bytes >= 100 * 2 ** 30 ? 0 : 1);
/** @param {number | undefined} bps */
function bandwidthClass(bps) {
  if (typeof bps !== 'number') return 'bw-none';
  if (bps >= 1e10) return 'bw-fast';
  if (bps >= 1e9) return 'bw-good';
  if (bps >= 1e8) return 'bw-slow';
  return 'bw-poor';
}

/** @param {TopologyNodeView} node */
function roleOf(node) {
  if (node.role) return node.role;
  return view.node && view.node.leaderId === node.id ? 'leader' : 'follower';
}

function drawTopology() {
  const svg = $('topology');
  svg.replaceChildren();
  const nodes = [...view.topology.nodes].sort((a, b) => (a.id < b.id ? -1 : 1));
  const cx = 400,
    cy = 280,
    r = nodes.length > 1 ? 200 : 0;
  /** @type {Map<string, Point>} */
  const pos = new Map(
    nodes.map((n, i) => {
      const a = (2 * Math.PI * i) / Math.max(nodes.length, 1) - Math.PI / 2;
      return [n.id, { x: cx + r * Math.cos(a), y: cy + r * Math.sin(a) }];
    }),
  );
  // One curve per directed link (per address): links between the same pair fan out so each stays visible.
  /** @type {Map<string, TopologyLinkView[]>} */
  const perPair = new Map();
  for (const link of view.topology.links) {
    const key = [link.source, link.sink].sort().join('\u0000');
    const group = perPair.get(key) ?? [];
    group.push(link);
    perPair.set(key, group);
  }
  const links = el('g', { class: 'links' });
  for (const group of perPair.values()) {
    group.sort((x, y) => `${x.source} ${x.ip}`.localeCompare(`${y.source} ${y.ip}`));
    group.forEach((link, i) => {
      const p = pos.get(link.source),
        q = pos.get(link.sink);
      if (!p || !q) return;
      // The normal is taken from the pair's canonical order, so every link of a pair (both directions, every
      // address) gets its own lane.
      const [a, b] = link.source < link.sink ? [p, q] : [q, p];
      const dx = b.x - a.x,
        dy = b.y - a.y,
        len = Math.hypot(dx, dy) || 1;
      const bend = (i - (group.length - 1) / 2) * 34 * 2;
      const mx = (p.x + q.x) / 2 - (dy / len) * bend,
        my = (p.y + q.y) / 2 + (dx / len) * bend;
      const cls = bandwidthClass(link.bandwidthBps);
      const g = el('g', { 'data-link': `${link.source}>${link.sink}@${link.ip ?? ''}`, 'data-testid': 'link' });
      g.append(el('path', { class: `link ${cls}`, d: `M${p.x},${p.y} Q${mx},${my} ${q.x},${q.y}` }));
      const label = `${link.type ?? 'unknown'} ${bandwidthText(link.bandwidthBps)}`;
      const rtt = typeof link.rttMs === 'number' ? `, RTT ${link.rttMs.toFixed(2)} ms` : '';
      // Label at 30% of the curve from its source, so A→B and B→A labels land at opposite ends.
      const at = 0.3,
        u = 1 - at;
      g.append(
        el(
          'text',
          {
            class: 'link-label',
            x: u * u * p.x + 2 * u * at * mx + at * at * q.x,
            y: u * u * p.y + 2 * u * at * my + at * at * q.y,
          },
          label,
        ),
      );
      g.append(el('title', {}, `${link.source} → ${link.sink} at ${link.ip ?? '?'}: ${label}${rtt}`));
      links.append(g);
    });
  }
  svg.append(links);
  for (const node of nodes) {
    const at = pos.get(node.id);
    if (!at) continue; // every node has a position (pos is built from nodes); this keeps the checker honest
    const { x, y } = at;
    const role = roleOf(node);
    const self = view.node && view.node.id === node.id;
    const g = el('g', {
      class: `node ${role}${self ? ' self' : ''}`,
      'data-node-id': node.id,
      'data-testid': 'node',
      transform: `translate(${x},${y})`,
    });
    g.append(el('circle', { r: 46 }));
    g.append(el('text', { class: 'name', y: -12 }, node.name || node.id.slice(0, 10)));
    g.append(el('text', { y: 4 }, role));
    const mem = node.memory ? `${gib(node.memory.ramAvailable)}/${gib(node.memory.ramTotal)} GiB` : 'memory ?';
    g.append(el('text', { y: 20 }, mem));
    // What the node can do (measured at start, or declared by flags): the planner's speed inputs.
    const d = node.device;
    if (d && (d.memoryBandwidthGBps !== undefined || d.gflops !== undefined)) {
      const bw = d.memoryBandwidthGBps === undefined ? '?' : Math.round(d.memoryBandwidthGBps);
      const gf = d.gflops === undefined ? '?' : Math.round(d.gflops);
      g.append(el('text', { y: 34, class: 'device' }, `${bw} GB/s · ${gf} GFLOP/s`));
    }
    const sources = d ? ` (memory bandwidth ${d.memoryBandwidthSource ?? '?'}, compute ${d.gflopsSource ?? '?'})` : '';
    // Calibrated figures (torus calibrate): what a framework reaches here; workloads naming it are predicted with them.
    const cal = Object.entries(node.calibrations ?? {});
    if (cal.length > 0)
      g.append(el('text', { y: 48, class: 'device' }, `calibrated: ${cal.map(([fw]) => fw).join(', ')}`));
    const calText = cal
      .map(([fw, f]) => `\n${fw}: ${f.gflops} GFLOP/s, ${f.memoryBandwidthGBps} GB/s, ${f.layerOverheadMs} ms/layer`)
      .join('');
    g.append(el('title', {}, `${node.id}${sources}${calText}`));
    svg.append(g);
  }
  $('counts').textContent = `${nodes.length} nodes, ${view.topology.links.length} links`;
}

/** @param {string} id */
function nameOf(id) {
  return view.topology.nodes.find((n) => n.id === id)?.name || id.slice(0, 10);
}

function drawInstances() {
  drawJobs($('instances'), view.instances, { nameOf, changed: scheduleRefetch });
}

function drawEvents() {
  $('events').replaceChildren(
    ...recent.map((e) => {
      const { type, ...rest } = e.event;
      return el('li', { value: e.index, 'data-index': e.index }, `${type} ${JSON.stringify(rest).slice(0, 160)}`);
    }),
  );
}

function drawHeader() {
  const n = view.node;
  if (n) $('self').textContent = `${n.name} (${n.id.slice(0, 12)}) · ${n.role} · v${n.version}`;
  $('index').textContent = `event #${view.lastIndex}`;
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let refetchTimer;
function scheduleRefetch() {
  clearTimeout(refetchTimer);
  refetchTimer = setTimeout(refresh, 150);
}

async function refresh() {
  try {
    /** @type {[NodeInfo, TopologyView, { instances: InstanceView[] }]} */
    const [node, topology, instances] = await Promise.all([
      getJson('/v1/node'),
      getJson('/v1/topology'),
      getJson('/v1/instances'),
    ]);
    view.node = node;
    view.topology = topology;
    view.instances = instances.instances;
    if (typeof topology.lastIndex === 'number') view.lastIndex = Math.max(view.lastIndex, topology.lastIndex);
    drawHeader();
    drawTopology();
    drawInstances();
    drawBench($('bench-chart'), $('bench-runs'), view.topology);
  } catch (error) {
    $('self').textContent = `unreachable: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function connect() {
  const start = Math.max(0, view.lastIndex - MAX_EVENTS);
  const source = new EventSource(`/v1/events?after=${start}`);
  const live = $('live');
  source.onopen = () => {
    live.textContent = 'live';
    live.className = 'badge on';
  };
  source.onerror = () => {
    live.textContent = 'reconnecting';
    live.className = 'badge off';
  }; // EventSource retries with Last-Event-ID
  source.onmessage = (msg) => {
    /** @type {IndexedEvent} */
    const entry = JSON.parse(msg.data);
    view.lastIndex = Math.max(view.lastIndex, entry.index);
    recent.unshift(entry);
    recent.length = Math.min(recent.length, MAX_EVENTS);
    drawEvents();
    drawHeader();
    scheduleRefetch();
  };
  source.addEventListener('gap', scheduleRefetch);
  source.addEventListener('bench-pipeline', (msg) => {
    noteBenchPipeline(JSON.parse(msg.data));
    $('index').textContent = 'bench pipeline done';
  });
  source.addEventListener('bench', (msg) => {
    /** @type {BenchRunEvent} */
    const run = JSON.parse(msg.data);
    const p = run.progress;
    $('index').textContent = `bench ${run.status}${p ? ` ${p.done}/${p.total}` : ''}`;
    noteBenchRun(run);
    drawBench($('bench-chart'), $('bench-runs'), view.topology);
  });
}

/** Runs started before the page opened (the last few this node ran); later ones arrive as `bench` notices. */
async function loadBenchRuns() {
  try {
    /** @type {{ runs: BenchRunEvent[] }} */
    const { runs } = await getJson('/v1/bench/ring');
    for (const run of [...runs].reverse()) noteBenchRun(run);
  } catch {
    // an older node without the list: the chart fills from live notices
  }
}

await loadBenchRuns();

// Placement options for a described workload, with predicted speed (previews.js).
const previewForm = /** @type {HTMLFormElement} */ ($('preview-form'));
previewForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const data = new FormData(previewForm);
  const num = (/** @type {string} */ k) => Number(data.get(k));
  $('preview-error').textContent = '';
  fetchPreviews({
    memoryBytes: num('memoryBytes'),
    layers: num('layers'),
    hiddenSize: num('hiddenSize'),
    tokensPerStep: num('tokensPerStep'),
  })
    .then((options) => drawPreviews($('previews'), options, nameOf))
    .catch((error) => {
      $('preview-error').textContent = String(error instanceof Error ? error.message : error);
    });
});
await refresh();
connect();
setInterval(refresh, 10_000); // a safety net: views also refresh on every event
setInterval(() => void refreshTails(true), 3000); // running jobs' log tails (log lines are not cluster events)
