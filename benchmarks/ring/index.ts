/**
 * Ring benchmark suite: the issue's targets, measured in the namespace lab (root) or on loopback.
 *   A. 4 ranks, links shaped at 1 Gbit/s, all-reduce ≥ 8 MiB: one-direction ring vs both directions,
 *      against iperf3 one-way / --bidir; the same ring forced onto the (1 Gbit/s) LAN.
 *   B. 2 ranks, unshaped: small all-reduce (8 B – 64 KiB) median latency.
 *   C. 2 ranks, unshaped: large all-reduce busbw against one Node TCP stream.
 *   D. 4 ranks, unshaped: the same (4 rank processes on the machine's cores).
 *   E. 4 ranks, lab only: torch Gloo's all_reduce beside the ring on a switched 1 Gbit/s LAN (the
 *      ring's own choice: one direction) and on a ring of 5 Gbit/s point-to-point links (both directions; Gloo,
 *      bound to one interface, stays on the LAN). Needs python3-torch; the report says so when it is missing.
 * C and D also print a ring of raw Node streams (the ring's traffic with no collective) and the
 * CPU-bound ceiling computed from the measured CPU cost per byte (docs/ring.md, "unshaped links").
 * Usage: node build/benchmarks/ring/index.js [--quick] [--json] [--mode lab|loopback]
 * Speeds are not asserted: the machine is shared and noisy; read the ratios.
 */
import { Lab } from '../../src/lab/index.js';
import {
  cpuCeiling,
  formatReport,
  largeBusbw,
  largeCpu,
  largestBusbw,
  runRingBench,
  smallMedianUs,
  streamBaseline,
  type RingBenchOptions,
  type RingBenchResult,
} from '../../src/bench/ring/index.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const json = args.includes('--json');
const modeArg = args[args.indexOf('--mode') + 1];
const mode: 'lab' | 'loopback' =
  args.includes('--mode') && (modeArg === 'lab' || modeArg === 'loopback')
    ? modeArg
    : Lab.available()
      ? 'lab'
      : 'loopback';
const MiB = 1024 * 1024;

const base: RingBenchOptions = {
  mode,
  ranks: 2,
  ops: ['all_reduce'],
  minBytes: 8,
  maxBytes: 8,
  factor: 2,
  warmup: 1,
  iters: 5,
  check: true,
  dtype: 'float32',
  redop: 'sum',
  root: 0,
  over: ['p2p'],
  directions: ['both'],
  connections: 1,
  timeoutMs: 60_000,
  capacity: true,
  capacitySeconds: quick ? 1 : 3,
  gloo: false,
};

const scenarios: { name: string; options: RingBenchOptions }[] = [
  {
    name: 'A. 4 ranks, 1 Gbit/s links: one direction vs both, p2p vs LAN',
    // ≥ 32 MiB: shorter ops spend a visible part of their ~100 ms in TCP ramp-up through tbf's 50 ms queues.
    options: {
      ...base,
      ranks: 4,
      minBytes: quick ? 32 * MiB : 8 * MiB,
      maxBytes: quick ? 32 * MiB : 64 * MiB,
      iters: quick ? 2 : 5,
      linkRate: '1gbit',
      lanRate: '1gbit',
      over: mode === 'lab' ? ['p2p', 'lan'] : ['p2p'],
      directions: ['one', 'both'],
    },
  },
  {
    name: 'B. 2 ranks, unshaped: small-message all-reduce latency',
    options: {
      ...base,
      minBytes: 8,
      maxBytes: 64 * 1024,
      factor: quick ? 8 : 2,
      warmup: 5,
      iters: quick ? 50 : 200,
      capacity: false,
    },
  },
  {
    // With 2 ranks the default engine runs one direction (it already uses both ways of the link).
    name: 'C. 2 ranks, unshaped: large all-reduce vs one Node TCP stream',
    options: {
      ...base,
      minBytes: quick ? 16 * MiB : 8 * MiB,
      maxBytes: quick ? 64 * MiB : 64 * MiB,
      factor: quick ? 4 : 2,
      iters: quick ? 5 : 10,
      directions: ['both'],
    },
  },
  {
    name: 'D. 4 ranks, unshaped: large all-reduce vs one Node TCP stream',
    options: {
      ...base,
      ranks: 4,
      minBytes: quick ? 16 * MiB : 8 * MiB,
      maxBytes: quick ? 64 * MiB : 64 * MiB,
      factor: quick ? 4 : 2,
      iters: quick ? 5 : 10,
      directions: ['one', 'both'],
    },
  },
  ...(mode === 'lab'
    ? [
        {
          name: 'E. 4 ranks: torch Gloo vs the ring on a 1 Gbit/s LAN and on 5 Gbit/s point-to-point links',
          options: {
            ...base,
            ranks: 4,
            minBytes: 8 * MiB,
            maxBytes: quick ? 16 * MiB : 32 * MiB,
            iters: quick ? 3 : 5,
            linkRate: '5gbit',
            lanRate: '1gbit',
            over: ['p2p', 'lan'],
            directions: ['auto'],
            capacity: false,
            gloo: true,
          } as RingBenchOptions,
        },
      ]
    : []),
];

const progress = (line: string) =>
  process.stderr.write(process.stderr.isTTY ? `\r\x1b[K[ring bench] ${line}` : `[ring bench] ${line}\n`);
const results: { name: string; result: RingBenchResult }[] = [];
for (const scenario of scenarios) {
  progress(scenario.name);
  results.push({ name: scenario.name, result: await runRingBench(scenario.options, progress) });
}
if (process.stderr.isTTY) process.stderr.write('\n');

const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(0)} %`);
const times = (x: number | null) => (x === null ? 'n/a' : `${x.toFixed(2)}×`);
function summary(): string[] {
  const [a, b, c, d] = results.map((r) => r.result);
  const lines = ['| target | measured | goal |', '|---|---|---|'];
  const cap = (r: RingBenchResult | undefined, over: 'p2p' | 'loopback') =>
    r?.capacity[over] ?? r?.capacity.p2p ?? r?.capacity.loopback;
  const runOf = (r: RingBenchResult | undefined, over: string, bidi: boolean) =>
    r?.runs.find((x) => x.bidirectional === bidi && (x.over === over || over === 'any'));
  const aOne = runOf(a, mode === 'lab' ? 'p2p' : 'any', false);
  const aBoth = runOf(a, mode === 'lab' ? 'p2p' : 'any', true);
  const aCap = cap(a, mode === 'lab' ? 'p2p' : 'loopback')?.iperfOneWay ?? null;
  const ratio = (run: typeof aOne, capacity: number | null | undefined) =>
    run && capacity ? (largeBusbw(run) ?? 0) / capacity : null;
  const top = (run: typeof aOne, capacity: number | null | undefined) =>
    run && capacity ? (largestBusbw(run) ?? 0) / capacity : null;
  lines.push(
    `| 4 ranks @1 Gbit/s, one-direction busbw / iperf3 one-way (mean ≥ 8 MiB; largest size) | ${pct(ratio(aOne, aCap))}; ${pct(top(aOne, aCap))} | ≥ 95 % |`,
  );
  lines.push(
    `| 4 ranks @1 Gbit/s, both-directions busbw / iperf3 one-way (mean ≥ 8 MiB; largest size) | ${times(ratio(aBoth, aCap))}; ${times(top(aBoth, aCap))} | ≥ 1.6× |`,
  );
  const bRun = b?.runs[0];
  const small = bRun ? smallMedianUs(bRun) : null;
  lines.push(
    `| 2 ranks unshaped, all-reduce 8 B–64 KiB, median | ${small === null ? 'n/a' : `${small.toFixed(0)} µs`} | ≤ 200 µs |`,
  );
  for (const [r, ranks] of [
    [c, 2],
    [d, 4],
  ] as const) {
    const capacity = cap(r, mode === 'lab' ? 'p2p' : 'loopback');
    const runs = (r?.runs ?? [])
      .map((run) => ({ run, x: ratio(run, streamBaseline(capacity)) }))
      .filter((e): e is { run: typeof e.run; x: number } => e.x !== null)
      .sort((p, q) => q.x - p.x);
    const best = runs[0];
    const streams = best && capacity?.streamRing ? ratio(best.run, capacity.streamRing.meanBitsPerSecond) : null;
    const cpu = best ? largeCpu(best.run) : null;
    const ceiling =
      cpu && capacity?.nodeStreamCpu && r
        ? cpuCeiling(capacity.nodeStreamCpu, cpu, Math.min(1, r.machine.cpus / ranks))
        : null;
    const base = streamBaseline(capacity);
    const ceil =
      ceiling && base
        ? `; CPU-bound ceiling: this engine ${pct(ceiling.engine / base)}, zero-cost ring ${pct(ceiling.ideal / base)}; ranks on CPU ${pct(cpu?.busy ?? null)}`
        : '';
    lines.push(
      `| ${ranks} ranks unshaped, large all-reduce busbw / one Node TCP stream (${best?.run.label ?? 'n/a'}) | ${pct(best?.x ?? null)}; ${times(streams)} a ring of raw Node streams${ceil} | ≥ 80 % |`,
    );
  }
  const e = results[4]?.result;
  const gloo = e?.gloo;
  if (gloo && !gloo.ok) lines.push(`| torch Gloo comparison | ${gloo.reason} | |`);
  if (e && gloo?.ok) {
    const large = gloo.rows.filter((r) => r.bytes >= 8 * MiB);
    const glooBps = large.length ? (large.reduce((s, r) => s + r.busbw, 0) / large.length) * 8e9 : null;
    const vs = (over: string) => {
      const run = e.runs.find((r) => r.over === over);
      const mine = run ? largeBusbw(run) : null;
      return mine !== null && glooBps ? mine / glooBps : null;
    };
    lines.push(
      `| 4 ranks, switched 1 Gbit/s LAN, ≥ 8 MiB all-reduce busbw / torch Gloo (same hosts) | ${times(vs('lan'))} | ≥ 0.97× |`,
    );
    lines.push(
      `| 4 ranks, ring of 5 Gbit/s p2p links (Gloo on the LAN), ≥ 8 MiB busbw / torch Gloo | ${times(vs('p2p'))} | ≥ 3× |`,
    );
  }
  return lines;
}

if (json) process.stdout.write(`${JSON.stringify({ mode, quick, scenarios: results }, null, 2)}\n`);
else {
  for (const { name, result } of results) process.stdout.write(`\n## ${name}\n\n${formatReport(result)}\n`);
  process.stdout.write(`\n## Targets (mode ${mode}; 2 shared vCPUs, numbers are noisy)\n\n${summary().join('\n')}\n`);
}
