/**
 * Soak: three lab nodes under churn for `--minutes` (default 10): a step a second in the mix `--mix` (default
 * place=4,ring=1,artifact=1,job=1, churn.ts: one-node exec placements, ring collectives across the nodes, small
 * artifacts added, broadcast and deleted, three-node exec jobs) and link re-measures every 20 s. The table says
 * what ran: the steps of each kind and how many failed, with the last reason. A sample whose /metrics scrape
 * failed, or in which a thread did not answer, has those figures missing (samples.ts): the slopes go without them
 * and each row says how many samples it is missing. Every 10 s each node process is sampled (samples.ts);
 * printed per node: RSS, the heap of each thread, data-dir bytes, open fds and threads at the start, at the end,
 * and as a slope per hour over the last two thirds (the first third is warm-up).
 *   npm run bench -- soak [--minutes 10] [--rate 1] [--mix place=4,ring=1,artifact=1,job=1] [--env-on H:NAME=VALUE]...
 *     [--json]   (root; needs `ip`)
 * `--rate N` runs N steps a second instead of one (the nodes' --max-write-rate raised to match): hours of churn in
 * minutes, to see whether what the threads keep (the live heap row) grows with the number of placements.
 * `--env-on 2:TORUS_IDLE_GC_MINUTES=0` starts node h2 with that variable: a setting tried side by side with the two
 * nodes left as they are, under the same churn in the same run (`2:MALLOC_ARENA_MAX=0`: glibc's own arena limit
 * instead of the node's 2, src/native/malloc-arenas.ts). `--samples FILE` writes every sample as a JSON
 * line (`{node, ...Sample}`) as it is taken, so a long run can be read after (or while) it runs. Stopped by hand
 * (SIGINT, SIGTERM), it tears the lab down and prints the table of what it sampled until then.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { BenchOwner, Lab, NodeCluster, nodeUnavailableReason, profiled } from '../../src/lab/index.js';
import { args, flag } from '../args.js';
import { printTable, type BenchRow } from '../table.js';
import { floorPerWindow, missingCount, nodePid, rolesOf, sampleProcess, slopePerHour, type Sample } from './samples.js';
import { Churn, DEFAULT_MIX, parseMix, schedule, type ChurnKind } from './churn.js';

const json = args.includes('--json');
const minutes = Number(flag('--minutes') ?? 10);
const rate = Number(flag('--rate') ?? 1);
const SAMPLE_EVERY_MS = Math.min(10_000, (minutes * 60_000) / 12);
/** Floors (the lowest sample per window, samples.ts) over windows of 5 minutes, or a sixth of a short run. */
const FLOOR_WINDOW_MIN = +Math.min(5, minutes / 6).toFixed(1);
const MEASURE_EVERY_MS = 20_000;
const samplesFile = flag('--samples');
const mixFlag = flag('--mix');
const mix = mixFlag === undefined ? DEFAULT_MIX : parseMix(mixFlag);
const MIB = 2 ** 20;
/** `--env-on H:NAME=VALUE`, repeatable: extra environment for node hH. */
const envOn = new Map<number, Record<string, string>>();
for (const [i, a] of args.entries()) {
  if (a !== '--env-on') continue;
  const m = /^(\d):([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(args[i + 1] ?? '');
  if (!m || Number(m[1]) > 2)
    throw new Error('--env-on takes H:NAME=VALUE with H in 0..2, e.g. 2:TORUS_IDLE_GC_MINUTES=0');
  envOn.set(Number(m[1]), { ...envOn.get(Number(m[1])), [m[2]!]: m[3]! });
}
const nodeLabel = (i: number): string => {
  const env = envOn.get(i);
  return env
    ? `h${i} (${Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')})`
    : `h${i}`;
};

const progress = (line: string): void => void process.stderr.write(`[soak] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Set by the first SIGINT/SIGTERM: the churn ends and the table covers the samples taken so far. */
let stoppedBy: NodeJS.Signals | undefined;
let stoppedAt = 0;
/** Before the churn there is nothing to report: a signal then ends the run (the lab is torn down on exit). */
let churning = false;
const stopByHand = (signal: NodeJS.Signals): void => {
  if (!churning) process.exit(130);
  // A terminal's Ctrl-C reaches this process twice when `npm run bench` passes it on as well: one stop.
  if (stoppedBy && Date.now() - stoppedAt > 2000) process.exit(130);
  if (stoppedBy) return;
  stoppedBy = signal;
  stoppedAt = Date.now();
  progress(`${signal}: stopping; the table covers what was sampled so far (again to stop at once)`);
};
process.on('SIGINT', stopByHand);
process.on('SIGTERM', stopByHand);

async function main(): Promise<void> {
  const why = Lab.unavailableReason() ?? nodeUnavailableReason();
  if (why) {
    progress(`skipped: ${why}`);
    return;
  }
  if (!Number.isFinite(minutes) || minutes <= 0) throw new Error('--minutes must be a positive number');
  if (!Number.isFinite(rate) || rate <= 0) throw new Error('--rate must be a positive number (placements a second)');
  if (samplesFile) writeFileSync(samplesFile, '');
  const owner = new BenchOwner();
  const samples: Sample[][] = [[], [], []];
  let churn: Churn | undefined;
  const startedAt = Date.now();
  try {
    const lab = await Lab.create({ hosts: 3 });
    const c = await NodeCluster.start(owner, lab, {
      nodeArgs: () => [
        '--allow-exec',
        '--iface-type',
        'lan0=ethernet',
        // Creates (and re-measures) per minute from the bench's one address: the default 60 holds a rate of 1/s.
        ...(rate > 1 ? ['--max-write-rate', String(Math.ceil(rate * 60 * 2))] : []),
      ],
      envOf: (host) => envOn.get(host) ?? {},
    });
    await c.converged(240_000, profiled);
    const ids = await Promise.all(c.nodes.map(async (n) => (await n.get<{ id: string }>('/v1/node')).id));
    churn = new Churn(c.nodes, ids);
    const steps = schedule(mix);
    progress(`3 nodes agreed and profiled; churn at ${rate} a second for ${minutes} min: ${steps.join(', ')}, ...`);
    churning = true;
    const pids = c.nodes.map((n) => nodePid(n.proc!.pid!));
    const sampleAll = async (): Promise<void> => {
      await Promise.all(
        c.nodes.map(async (n, i) => {
          // A failed scrape is a missing sample (samples.ts), not a heap of 0.
          let text = '';
          let error: string | undefined;
          try {
            const res = await n.fetch('/metrics');
            text = await res.text();
            if (!res.ok) error = `HTTP ${res.status}`;
          } catch (e) {
            error = e instanceof Error ? e.message : String(e);
          }
          // A node gone when stopped by hand is the lab's teardown, not a finding: no sample, no error.
          if (stoppedBy) return;
          const sample = sampleProcess(pids[i]!, n.dataDir, text, error);
          samples[i]!.push(sample);
          if (samplesFile) appendFileSync(samplesFile, `${JSON.stringify({ node: nodeLabel(i), ...sample })}\n`);
        }),
      );
    };
    await sampleAll();
    const end = Date.now() + minutes * 60_000;
    // Samples on their own clock: a churn step that takes a while (a ring, a job) does not delay them.
    const sampler = (async () => {
      let nextProgress = Date.now() + 60_000;
      while (Date.now() < end && !stoppedBy) {
        await sleep(Math.min(SAMPLE_EVERY_MS, Math.max(0, end - Date.now())));
        if (stoppedBy) return;
        await sampleAll();
        if (Date.now() >= nextProgress) {
          nextProgress += 60_000;
          const left = Math.max(0, Math.round((end - Date.now()) / 60_000));
          const rss = samples.map((series) => ((series.at(-1)?.rssBytes ?? 0) / MIB).toFixed(0)).join('/');
          const ran = [...churn!.counts()].map(([k, n]) => `${k} ${n.ran}${n.failed ? ` (${n.failed} failed)` : ''}`);
          progress(`${ran.join(', ')}; RSS ${rss} MiB; ${left} min left`);
        }
      }
    })();
    // A sampling error (a node process gone) ends the run at `await sampler` below, not as an unhandled rejection.
    sampler.catch(() => {});
    let nextMeasure = Date.now() + MEASURE_EVERY_MS;
    for (let i = 0; Date.now() < end && !stoppedBy; i++) {
      const tick = Date.now();
      await churn.run(steps[i % steps.length]!, i);
      if (Date.now() >= nextMeasure) {
        nextMeasure += MEASURE_EVERY_MS;
        await churn.run('measure', i);
      }
      await sleep(Math.max(0, 1000 / rate - (Date.now() - tick)));
    }
    await sampler;
    // Stopped by hand, the lab's own signal handler has already stopped the nodes: nothing left to sample.
    if (!stoppedBy) await sampleAll();
  } finally {
    churn?.close();
    await owner.close();
  }
  const rows: BenchRow[] = [];
  for (const [i, series] of samples.entries()) {
    const first = series[0];
    const last = series.at(-1);
    if (!first || !last) continue;
    const warm = series.filter((s) => s.atMs >= first.atMs + (last.atMs - first.atMs) / 3);
    const roles = rolesOf(series);
    const node = roles ? `${nodeLabel(i)} ${roles}` : nodeLabel(i);
    const row = (what: string, pick: (s: Sample) => number, scale: number, unit: string): void => {
      // The slope goes without missing samples (slopePerHour skips NaN); the row says how many there were.
      const slope = slopePerHour(warm.map((s) => ({ atMs: s.atMs, y: pick(s) })));
      rows.push({
        node,
        what: `${what} (${unit})`,
        // The first and last known values: the live heap is unknown until a thread's first full collection.
        start: +(pick(series.find((s) => Number.isFinite(pick(s))) ?? first) / scale).toFixed(1),
        end: +(pick(series.findLast((s) => Number.isFinite(pick(s))) ?? last) / scale).toFixed(1),
        'slope /h': +(slope / scale).toFixed(1),
        missing: missingCount(series, pick),
      });
    };
    const floorRow = (what: string, pick: (s: Sample) => number, scale: number, unit: string): void => {
      const floors = floorPerWindow(
        series.map((s) => ({ atMs: s.atMs, y: pick(s) })),
        FLOOR_WINDOW_MIN * 60_000,
      );
      const warmFloors = floors.filter((p) => p.atMs >= first.atMs + (last.atMs - first.atMs) / 3);
      rows.push({
        node,
        what: `${what} (${unit})`,
        start: +((floors[0]?.y ?? NaN) / scale).toFixed(1),
        end: +((floors.at(-1)?.y ?? NaN) / scale).toFixed(1),
        'slope /h': +(slopePerHour(warmFloors) / scale).toFixed(1),
        missing: missingCount(series, pick),
      });
    };
    row('RSS', (s) => s.rssBytes, MIB, 'MiB');
    // RSS less the committed heaps: malloc, stacks, code; what the heaps' GC waves cannot explain.
    row('RSS outside the V8 heaps', (s) => s.rssBytes - s.heapTotalBytes, MIB, 'MiB');
    row('RSS anonymous', (s) => s.rssAnonBytes, MIB, 'MiB');
    row('RSS file-backed', (s) => s.rssFileBytes, MIB, 'MiB');
    for (const thread of Object.keys(last.heapBytes).sort())
      row(`heap ${thread}`, (s) => s.heapBytes[thread] ?? NaN, MIB, 'MiB');
    row('heap committed, all threads', (s) => s.heapTotalBytes, MIB, 'MiB');
    const heapUsed = (s: Sample): number =>
      s.metricsError !== undefined || s.threadsMissing.length > 0
        ? Number.NaN
        : Object.values(s.heapBytes).reduce((a, b) => a + b, 0);
    row('heap in use, all threads', heapUsed, MIB, 'MiB');
    floorRow(`heap in use, floor per ${FLOOR_WINDOW_MIN} min`, heapUsed, MIB, 'MiB');
    // What the threads' objects hold after a full collection: a leak raises it, GC waves do not move it.
    row('heap live after full GC, all threads', (s) => s.heapLiveBytes, MIB, 'MiB');
    floorRow(`RSS, floor per ${FLOOR_WINDOW_MIN} min`, (s) => s.rssBytes, MIB, 'MiB');
    row('external, all threads', (s) => s.externalBytes, MIB, 'MiB');
    row("V8 malloc'ed, all threads", (s) => s.mallocedBytes, MIB, 'MiB');
    row('idle full collections, all threads', (s) => s.idleCollections, 1, 'count');
    row('data dir', (s) => s.dataDirBytes, MIB, 'MiB');
    row('open fds', (s) => s.fds, 1, 'count');
    row('threads', (s) => s.threads, 1, 'count');
  }
  const counts = churn ? [...churn.counts()] : [];
  const ran = (kind: ChurnKind): number => counts.find(([k]) => k === kind)?.[1].ran ?? 0;
  const scrapesFailed = samples.flat().filter((s) => s.metricsError !== undefined).length;
  const threadsMissing = samples.flat().filter((s) => s.threadsMissing.length > 0).length;
  printTable(
    `soak: 3 lab nodes, ${rate === 1 ? '' : `${rate} steps/s, `}${stoppedBy ? `stopped by hand after ${((stoppedAt - startedAt) / 60_000).toFixed(1)} of ` : ''}${minutes} min, ${ran('place')} placements, ${ran('ring')} rings, ${ran('artifact')} artifacts, ${ran('job')} jobs, ${ran('measure')} re-measures`,
    rows,
    json,
    'slope: least squares over the last two thirds of the run, per hour, without the missing samples; samples every ' +
      `${(SAMPLE_EVERY_MS / 1000).toFixed(0)} s; missing: samples without that figure (${scrapesFailed} scrapes failed, ` +
      `${threadsMissing} samples with a thread that did not answer)`,
  );
  printTable(
    `soak churn: mix ${Object.entries(mix)
      .map(([k, n]) => `${k}=${n}`)
      .join(',')}, a step every ${(1 / rate).toFixed(2)} s, and a re-measure every ${MEASURE_EVERY_MS / 1000} s`,
    counts.map(([kind, n]) => ({ kind, ran: n.ran, failed: n.failed, 'last failure': n.lastFailure ?? '' })),
    json,
  );
}

await main();
