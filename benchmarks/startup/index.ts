/**
 * Start-up cost, this build against another: a worker thread importing a protocol module (every actor
 * runs in its own worker and pays this), and a whole node's start (spawn of `node dist/main.js` to its start line).
 * Both builds are measured in the same run, interleaved round by round (order alternating), so load hits both;
 * the table gives medians and the ratio. Wall time and CPU time (from /proc: survives load better).
 *   node build/benchmarks/startup/index.js [--baseline DIR] [--runs N] [--quick] [--json]
 * DIR is another checkout's root with `npm run build` done (e.g. a worktree of the commit before a change).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printTable, type BenchRow } from '../table.js';
import { nodeStart, workerImport, type Sample } from './probes.js';
import { args, flag } from '../args.js';

const json = args.includes('--json');
const runs = Math.max(1, Number(flag('--runs') ?? (args.includes('--quick') ? 3 : 7)));
const here = fileURLToPath(new URL('../../..', import.meta.url)); // build/benchmarks/startup → the checkout's root
const baseline = flag('--baseline');

interface Build {
  readonly label: string;
  readonly root: string;
}
const builds: Build[] = [{ label: 'this', root: here }];
if (baseline) builds.push({ label: 'baseline', root: resolve(baseline) });
for (const b of builds)
  if (!existsSync(join(b.root, 'dist/main.js')))
    throw new Error(`${b.root}: no dist/main.js (run npm run build there)`);

/**
 * The device measurement runs 1.5 s after the node starts listening, ~1.6 s of one core: its cost shows in the
 * CPU a node uses in its first seconds, beside a node whose figures are declared (which skips it).
 */
const DECLARED = ['--device-gflops', '100', '--device-mem-bandwidth', '10'];
const SETTLE_MS = 5000;

interface Case {
  readonly name: string;
  readonly run: (root: string) => Promise<Sample>;
}
const CASES: Case[] = [
  { name: 'worker: import protocols/mailbox.js', run: (root) => workerImport(join(root, 'dist/protocols/mailbox.js')) },
  {
    name: 'worker: import mailbox.js + first 3 frames',
    run: (root) => workerImport(join(root, 'dist/protocols/mailbox.js'), true),
  },
  { name: 'worker: import protocols/events.js', run: (root) => workerImport(join(root, 'dist/protocols/events.js')) },
  { name: 'node start to its start line', run: (root) => nodeStart(root) },
  {
    name: 'node start, device declared (no measurement)',
    run: (root) => nodeStart(root, { args: DECLARED }),
  },
  {
    name: `node start + ${SETTLE_MS / 1000} s (device measured)`,
    run: (root) => nodeStart(root, { settleMs: SETTLE_MS }),
  },
  {
    name: `node start + ${SETTLE_MS / 1000} s, device declared`,
    run: (root) => nodeStart(root, { args: DECLARED, settleMs: SETTLE_MS }),
  },
];

const median = (xs: readonly number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round1 = (x: number | null): number | null => (x === null ? null : Math.round(x * 10) / 10);
const ratio = (a: number | null, b: number | null): number | null =>
  a === null || b === null || b === 0 ? null : Math.round((a / b) * 100) / 100;

const samples = new Map<string, Sample[]>(); // `${case}|${build}`
for (let r = 0; r < runs; r++) {
  const order = r % 2 === 0 ? builds : [...builds].reverse();
  for (const c of CASES) {
    for (const b of order) {
      const key = `${c.name}|${b.label}`;
      samples.set(key, [...(samples.get(key) ?? []), await c.run(b.root)]);
    }
  }
}

const rows: BenchRow[] = CASES.map((c) => {
  const stat = (label: string, pick: (s: Sample) => number | null): number | null =>
    round1(median((samples.get(`${c.name}|${label}`) ?? []).map(pick).filter((x): x is number => x !== null)));
  const row: Record<string, string | number | null> = {
    case: c.name,
    'this wall ms': stat('this', (s) => s.wallMs),
    'this cpu ms': stat('this', (s) => s.cpuMs),
  };
  if (baseline) {
    row['baseline wall ms'] = stat('baseline', (s) => s.wallMs);
    row['baseline cpu ms'] = stat('baseline', (s) => s.cpuMs);
    row['wall ratio'] = ratio(row['this wall ms'] as number | null, row['baseline wall ms'] as number | null);
    row['cpu ratio'] = ratio(row['this cpu ms'] as number | null, row['baseline cpu ms'] as number | null);
  }
  return row;
});
const cpuOf = (name: string): number | null =>
  (rows.find((r) => r.case === name)?.['this cpu ms'] as number | null | undefined) ?? null;
const measured = cpuOf(`node start + ${SETTLE_MS / 1000} s (device measured)`);
const declared = cpuOf(`node start + ${SETTLE_MS / 1000} s, device declared`);
const startMeasured = cpuOf('node start to its start line');
const startDeclared = cpuOf('node start, device declared (no measurement)');
const deviceNote =
  measured !== null && declared !== null && startMeasured !== null && startDeclared !== null
    ? `device measurement: start line ${startMeasured} vs ${startDeclared} ms CPU (measured vs declared figures, ` +
      `${ratio(startMeasured, startDeclared)}×: it runs after the start line); ${SETTLE_MS / 1000} s later ` +
      `${measured} vs ${declared} ms CPU, +${Math.round(measured - declared)} ms for the measurement`
    : 'device measurement: n/a';
printTable(
  `Start-up: medians of ${runs} interleaved runs${baseline ? ` (baseline ${baseline})` : ''}`,
  rows,
  json,
  "worker rows: one fresh process whose worker thread imports the module (cpu = that thread's on-CPU time). node start: " +
    '`node dist/main.js --port 0 --no-mdns` on loopback to its start line (cpu = the whole process, all threads, 10 ms ticks). ' +
    `Ratios are this / baseline. "+ ${SETTLE_MS / 1000} s" rows: CPU up to that long after the start line. ${deviceNote}`,
);
