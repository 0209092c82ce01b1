// @ts-check
// The dashboard's jobs and instances: one card per instance with its workload, state (an exec
// instance is a job: running / restarting / completed / failed), exit code, each rank's node, status and exit, a
// tail of one rank's log (GET /v1/instances/:id/logs?tail=…), a delete button, and where the workload's artifacts
// are on its nodes (held, or the share received and the rate, from the instance view's `artifacts`).
/** @typedef {import('../node-facade.js').InstanceView} InstanceView */
/** @typedef {import('../../artifacts/instance-progress.js').InstanceArtifactView} InstanceArtifactView */
/** @typedef {import('../node-facade.js').RunnerView} RunnerView */
/**
 * The `job` field of an exec instance's view (src/api/views.ts).
 * @typedef {{ state: string, exitCode?: number, signal?: string, failedRank?: number, failedNode?: string, restarts?: number }} JobInfo
 */
/** @typedef {{ rank: number, stream: 'stdout' | 'stderr' }} LogChoice */
/**
 * @typedef {object} JobsContext
 * @property {(nodeId: string) => string} nameOf a node's display name
 * @property {() => void} changed asks the page to refetch its views (after a delete)
 */

import { bytesText, el } from './dom.js';

const TAIL_BYTES = 4096;
const TAIL_LINES = 20;

/** What the user chose to read per instance (kept across redraws). @type {Map<string, LogChoice>} */
const chosen = new Map();
/** The last tail fetched per instance, and for which choice. @type {Map<string, { key: string, text: string }>} */
const tails = new Map();
/** @type {readonly InstanceView[]} */
let shown = [];
/** @type {HTMLElement | undefined} */
let root;
/** @type {JobsContext | undefined} */
let context;

/** @param {InstanceView} inst @returns {JobInfo | undefined} */
const jobOf = (inst) => (inst.job && typeof inst.job === 'object' ? /** @type {JobInfo} */ (inst.job) : undefined);

/** The state shown: the job's for an exec instance, else the instance status. @param {InstanceView} inst */
const stateOf = (inst) => jobOf(inst)?.state ?? inst.status ?? 'active';

/** @param {number | undefined} code @param {string | undefined} signal */
const exitText = (code, signal) => (typeof code === 'number' ? `exit ${code}` : signal ? `killed by ${signal}` : '');

/** @param {InstanceView} inst @returns {LogChoice} a failed job opens on the failing rank's stderr */
function choiceOf(inst) {
  const picked = chosen.get(inst.id);
  if (picked && picked.rank < inst.nodes.length) return picked;
  const job = jobOf(inst);
  return job?.state === 'failed' && typeof job.failedRank === 'number'
    ? { rank: job.failedRank, stream: 'stderr' }
    : { rank: 0, stream: 'stdout' };
}

/**
 * Redraws every card into `container`.
 * @param {HTMLElement} container
 * @param {readonly InstanceView[]} instances
 * @param {JobsContext} ctx
 */
export function drawJobs(container, instances, ctx) {
  root = container;
  context = ctx;
  shown = instances;
  container.replaceChildren(...instances.map((inst) => card(inst, ctx)));
  if (instances.length === 0) container.append(el('p', { class: 'empty' }, 'no instances'));
  for (const id of [...tails.keys()]) if (!instances.some((i) => i.id === id)) tails.delete(id);
  void refreshTails(false);
}

/** @param {InstanceView} inst @param {JobsContext} ctx @returns {Element} */
function card(inst, ctx) {
  const state = stateOf(inst);
  const job = jobOf(inst);
  const workload =
    inst.workload && typeof inst.workload === 'object'
      ? /** @type {{ id?: string, kind?: string }} */ (inst.workload)
      : {};
  const box = el('article', { class: `job state-${state}`, 'data-instance-id': inst.id, 'data-testid': 'job' });
  const head = el('header');
  head.append(el('strong', { class: 'id' }, inst.id));
  head.append(
    el('span', { class: 'workload', 'data-testid': 'workload' }, `${workload.id ?? '?'} (${workload.kind ?? 'ring'})`),
  );
  head.append(el('span', { class: `badge state-${state}`, 'data-testid': 'job-state' }, state));
  const exit = job ? exitText(job.exitCode, job.signal) : '';
  head.append(el('span', { class: 'exit', 'data-testid': 'exit-code' }, exit));
  if (job && (job.restarts ?? 0) > 0) head.append(el('span', { class: 'restarts' }, `restarts ${job.restarts}`));
  const del = el(
    'button',
    { type: 'button', class: 'delete', 'data-testid': 'delete', title: 'stop every rank and remove the instance' },
    'delete',
  );
  del.addEventListener('click', () => void remove(inst.id, ctx));
  head.append(del);
  box.append(head);
  box.append(el('p', { class: 'ring' }, inst.nodes.join(' → ') + (inst.nodes.length > 1 ? ' ↺' : '')));
  if (inst.reason) box.append(el('p', { class: 'reason', 'data-testid': 'reason' }, String(inst.reason)));

  const ranks = el('table', { class: 'ranks' });
  for (const r of inst.runners) ranks.append(rankRow(r, job, ctx));
  box.append(ranks);
  box.append(artifactsPanel(inst, ctx));
  if (job) box.append(logPanel(inst)); // a job's output; a ring instance's runner logs are for `instances` and the files
  return box;
}

/** @param {RunnerView} r @param {JobInfo | undefined} job @param {JobsContext} ctx */
function rankRow(r, job, ctx) {
  const tr = el('tr', { 'data-testid': 'rank', 'data-rank': r.rank ?? '' });
  tr.append(el('td', {}, `rank ${r.rank ?? '?'}`));
  tr.append(el('td', { title: r.node }, ctx.nameOf(r.node)));
  const status = el('td');
  status.append(el('span', { class: `runner ${r.status}`, title: r.reason ?? '' }, r.status));
  tr.append(status);
  // The runner's later statuses (shutting down) do not repeat its exit; the job keeps the failing rank's.
  const failing = job?.state === 'failed' && job.failedRank === r.rank;
  const code = typeof r.exitCode === 'number' ? r.exitCode : failing ? job?.exitCode : undefined;
  const signal = typeof r.signal === 'string' ? r.signal : failing ? job?.signal : undefined;
  const stopped = job && job.state !== 'running' && code === undefined && !signal ? 'stopped' : '';
  tr.append(el('td', { class: 'exit', 'data-testid': 'rank-exit' }, exitText(code, signal) || stopped));
  return tr;
}

/**
 * One line per artifact of the workload: per placed node `held`, or the share it holds, a bar and the rate it
 * receives at (the state's holdings, reported by each node every 2 s while it receives).
 * @param {InstanceView} inst @param {JobsContext} ctx
 */
function artifactsPanel(inst, ctx) {
  const panel = el('div', { class: 'artifacts', 'data-testid': 'artifacts' });
  const list = Array.isArray(inst.artifacts) ? /** @type {InstanceArtifactView[]} */ (inst.artifacts) : [];
  for (const a of list) {
    const row = el('div', { class: 'artifact', 'data-testid': 'artifact', 'data-artifact-id': a.id });
    row.append(
      el('span', { class: 'artifact-name', title: a.id }, `${a.name} (${a.id.slice(0, 12)}, ${bytesText(a.bytes)})`),
    );
    // The bound for what is still to move, and what sets it: the figure the transfer is measured against.
    if (a.bound)
      row.append(
        el(
          'span',
          {
            class: 'artifact-bound',
            'data-testid': 'artifact-bound',
            title: `${bytesText(a.bound.bytes)} at ${(a.bound.capacityBps / 1e9).toFixed(2)} Gbit/s`,
          },
          `bound ${secondsText(a.bound.seconds)} (${a.bound.side}: ${a.bound.node === 'holders' ? 'the holders' : ctx.nameOf(a.bound.node)})`,
        ),
      );
    for (const n of a.nodes) {
      // A model's stage on this node: its share of what the node needs (its layers), not of the whole model.
      const need = typeof n.bytes === 'number' ? n.bytes : a.bytes;
      const share = need > 0 ? Math.min(1, n.haveBytes / need) : n.complete ? 1 : 0;
      const layers = Array.isArray(n.layers) ? ` layers ${n.layers[0]}-${n.layers[1]}` : '';
      const cell = el('span', {
        class: `artifact-node${n.complete ? ' held' : ''}`,
        'data-testid': 'artifact-node',
        'data-node-id': n.node,
        'data-complete': String(n.complete),
        title: n.node,
      });
      const bar = el('progress', { max: 1000, value: Math.round(share * 1000) });
      const rate = typeof n.rateBps === 'number' && n.rateBps > 0 ? ` at ${bytesText(n.rateBps)}/s` : '';
      cell.append(
        el('span', {}, `${ctx.nameOf(n.node)} `),
        bar,
        el(
          'span',
          { 'data-testid': 'artifact-progress' },
          n.complete ? ` held${layers}` : ` ${(share * 100).toFixed(1)}%${rate}${layers}`,
        ),
      );
      row.append(cell);
    }
    panel.append(row);
  }
  return panel;
}

/** `3 ms` under a second, `8.6 s` above. @param {number} s */
function secondsText(s) {
  return s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(1)} s`;
}

/** @param {InstanceView} inst */
function logPanel(inst) {
  const pick = choiceOf(inst);
  const panel = el('div', { class: 'log' });
  const bar = el('div', { class: 'log-bar' });
  bar.append(el('span', {}, 'log:'));
  for (const rank of inst.nodes.keys()) {
    for (const stream of /** @type {const} */ (['stdout', 'stderr'])) {
      const on = pick.rank === rank && pick.stream === stream;
      const b = el(
        'button',
        { type: 'button', class: on ? 'on' : '', 'data-log': `${rank}/${stream}` },
        `${rank} ${stream}`,
      );
      b.addEventListener('click', () => {
        chosen.set(inst.id, { rank, stream });
        if (root && context) drawJobs(root, shown, context);
      });
      bar.append(b);
    }
  }
  panel.append(bar);
  const cached = tails.get(inst.id);
  panel.append(
    el(
      'pre',
      { 'data-testid': 'log-tail', 'data-log': `${pick.rank}/${pick.stream}` },
      cached?.key.startsWith(`${pick.rank}/${pick.stream}/`) ? cached.text : '…',
    ),
  );
  return panel;
}

/**
 * Fetches the tail each card shows: when its choice or the instance changed, and (`live`) again for running ones.
 * @param {boolean} live
 */
export async function refreshTails(live) {
  await Promise.all(
    shown
      .filter((inst) => jobOf(inst))
      .map(async (inst) => {
        const pick = choiceOf(inst);
        const key = `${pick.rank}/${pick.stream}/${String(inst.generation)}/${stateOf(inst)}/${inst.runners.map((r) => r.status).join(',')}`;
        const cached = tails.get(inst.id);
        const running = stateOf(inst) === 'running' || stateOf(inst) === 'active';
        if (cached && cached.key === key && !(live && running)) return;
        try {
          const res = await fetch(
            `/v1/instances/${encodeURIComponent(inst.id)}/logs?rank=${pick.rank}&stream=${pick.stream}&tail=${TAIL_BYTES}`,
          );
          const body = await res.text();
          const text = res.ok ? lastLines(body) : `(${res.status}: ${body.slice(0, 200)})`;
          tails.set(inst.id, { key, text });
          const pre = root?.querySelector(`[data-instance-id="${CSS.escape(inst.id)}"] [data-testid="log-tail"]`);
          if (pre && pre.getAttribute('data-log') === `${pick.rank}/${pick.stream}`) pre.textContent = text;
        } catch {
          // the node is away; the next refresh tries again
        }
      }),
  );
}

/** @param {string} text */
function lastLines(text) {
  const lines = text.replace(/\n$/, '').split('\n');
  // A tail starts mid-file: its first line is likely cut, so it is dropped when there are more.
  const whole = text.length >= TAIL_BYTES && lines.length > 1 ? lines.slice(1) : lines;
  return whole.slice(-TAIL_LINES).join('\n') || '(empty)';
}

/** @param {string} id @param {JobsContext} ctx */
async function remove(id, ctx) {
  if (!confirm(`Delete ${id}? Every rank is stopped.`)) return;
  const res = await fetch(`/v1/instances/${encodeURIComponent(id)}`, { method: 'DELETE' });
  if (!res.ok) alert(`delete ${id}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
  ctx.changed();
}
