/** Human-readable report of a RingBenchResult: nccl-tests tables per variant, capacity and ratios. Pure. */
import type { Capacity } from './capacity.js';
import type { BenchRun, Over, RingBenchResult } from './run-bench.js';
import { BENCH_OPS, formatTable, gbit } from './table.js';

const LARGE = 8 * 1024 * 1024;
const SMALL = 64 * 1024;

/** Mean all-reduce busbw over sizes ≥ 8 MiB (null when none was run), bits/s. */
export function largeBusbw(run: BenchRun, op = 'all_reduce'): number | null {
  const rows = run.rows.filter((r) => r.op === op);
  if (rows.length === 0) return null;
  const large = rows.filter((r) => r.bytes >= LARGE);
  if (large.length === 0) return null;
  return (large.reduce((s, r) => s + r.busbw, 0) / large.length) * 8e9;
}

/** All-reduce busbw at the largest size run, bits/s (the least affected by per-op TCP ramp-up). */
export function largestBusbw(run: BenchRun, op = 'all_reduce'): number | null {
  const rows = run.rows.filter((r) => r.op === op);
  const last = rows[rows.length - 1];
  return last ? last.busbw * 8e9 : null;
}

/** Median over the small all-reduce sizes (8 B – 64 KiB) of each size's median time, µs. */
export function smallMedianUs(run: BenchRun): number | null {
  const times = run.rows
    .filter((r) => r.op === 'all_reduce' && r.bytes <= SMALL)
    .map((r) => r.medianUs)
    .sort((a, b) => a - b);
  return times.length === 0 ? null : (times[Math.floor(times.length / 2)] as number);
}

/** The one-stream baseline: the better of the probes before and after the ring ran. */
export function streamBaseline(c: Capacity | undefined): number | null {
  const values = [c?.nodeStream, c?.nodeStreamAfter].filter((v): v is number => typeof v === 'number' && v > 0);
  return values.length === 0 ? null : Math.max(...values);
}

export interface CpuUse {
  /** CPU time / wall time of the ops, mean over ranks and large sizes. */
  readonly busy: number;
  /** Time runnable but waiting for a CPU / wall time (Linux), or null. */
  readonly waiting: number | null;
  /** CPU µs a rank spends per MiB of busbw (it sends and receives that MiB). */
  readonly usPerBusMiB: number;
}

/** CPU use of the large (≥ 8 MiB) all-reduce rows of a run, null when the ranks did not report it. */
export function largeCpu(run: BenchRun): CpuUse | null {
  const rows = run.rows.filter(
    (r) => r.op === 'all_reduce' && r.bytes >= LARGE && typeof r.cpuUs === 'number' && r.timeUs > 0 && r.busbw > 0,
  );
  if (rows.length === 0) return null;
  const mean = (f: (r: (typeof rows)[number]) => number) => rows.reduce((s, r) => s + f(r), 0) / rows.length;
  const waits = rows.filter((r) => typeof r.runWaitUs === 'number');
  return {
    busy: mean((r) => (r.cpuUs as number) / r.timeUs),
    waiting: waits.length === rows.length ? mean((r) => (r.runWaitUs as number) / r.timeUs) : null,
    // busbw bytes per op = busbw × time; each rank sends and receives that many bytes.
    usPerBusMiB: mean((r) => (r.cpuUs as number) / ((r.busbw * 1e9 * r.timeUs * 1e-6) / (1024 * 1024))),
  };
}

/**
 * What the ring could carry if CPU were the only limit: every rank sends and receives each MiB of busbw,
 * so it pays at least one Node stream's sender plus receiver cost per MiB (s + r, a ring with zero
 * engine cost), and this engine pays its measured CPU per MiB of busbw. With `share` of a core per rank
 * (1 for 2 ranks on 2 vCPUs, 0.5 for 4) busbw ≤ share / cost. bits/s. The one stream itself is not
 * CPU-bound (its ends use well under a core each), so these projections are compared with its rate.
 */
export function cpuCeiling(
  stream: { sourceUsPerMiB: number; sinkUsPerMiB: number },
  cpu: CpuUse,
  share: number,
): { ideal: number; engine: number } {
  const bitsPerMiB = 8 * 1024 * 1024;
  return {
    ideal: (share * bitsPerMiB * 1e6) / (stream.sourceUsPerMiB + stream.sinkUsPerMiB),
    engine: (share * bitsPerMiB * 1e6) / cpu.usPerBusMiB,
  };
}

const ratio = (a: number | null, b: number | null | undefined) => (a !== null && b ? `${(a / b).toFixed(2)}×` : 'n/a');
const rate = (v: number | null | undefined) => (v ? gbit(v) : 'n/a');

function capacityLines(over: Over, c: Capacity): string[] {
  const again = c.nodeStreamAfter !== undefined ? ` (again after the ring: ${rate(c.nodeStreamAfter)})` : '';
  const lines = [
    `# capacity ${over} (host 0 → host 1): iperf3 one-way ${rate(c.iperfOneWay)}, iperf3 --bidir ${rate(c.iperfBidir)} (both directions added), one Node TCP stream ${rate(c.nodeStream)}${again}`,
  ];
  if (c.nodeStreamCpu)
    lines.push(
      `#   one Node stream's CPU per MiB: sender ${c.nodeStreamCpu.sourceUsPerMiB.toFixed(0)} µs, receiver ${c.nodeStreamCpu.sinkUsPerMiB.toFixed(0)} µs`,
    );
  const sr = c.streamRing;
  if (sr)
    lines.push(
      `# a ring of ${sr.hosts} raw Node streams (${over}; each host sends right and reads left at once, no collective): ${rate(sr.meanBitsPerSecond)} per direction (slowest ${rate(sr.minBitsPerSecond)}), ${sr.cpuUsPerMiB.toFixed(0)} µs CPU per MiB sent + received`,
    );
  return lines;
}

export function formatReport(result: RingBenchResult): string {
  const out: string[] = [];
  out.push(
    `# torus ring benchmark: ${result.ranks} ranks, mode ${result.mode}, p2p links ${result.linkRate ?? 'unshaped'}, LAN ${result.lanRate ?? 'unshaped'}`,
  );
  const m = result.machine;
  out.push(
    `# machine: ${m.cpus} vCPUs, load average ${m.loadBefore.toFixed(1)} → ${m.loadAfter.toFixed(1)}${m.loadBefore > m.cpus ? ' (shared and busy: expect noisy, CPU-bound numbers)' : ''}`,
  );
  for (const run of result.runs) {
    for (const op of BENCH_OPS) {
      const rows = run.rows.filter((r) => r.op === op);
      if (rows.length > 0) out.push('', formatTable(op, rows, `${op} — ${run.label} (kernel ${run.kernel})`));
    }
    for (const e of run.errors) out.push(`# ERROR ${e}`);
  }
  out.push('', '# --- links and ratios ---');
  for (const [over, c] of Object.entries(result.capacity) as [Over, Capacity][]) out.push(...capacityLines(over, c));
  for (const run of result.runs) {
    const busbw = largeBusbw(run);
    const c = result.capacity[run.over];
    if (busbw !== null) {
      const streams = c?.streamRing
        ? `, ${ratio(busbw, c.streamRing.meanBitsPerSecond)} a ring of raw Node streams`
        : '';
      out.push(
        `# ${run.label}: all_reduce large-message busbw ${gbit(busbw)} = ${ratio(busbw, c?.iperfOneWay)} iperf3 one-way, ${ratio(busbw, c?.iperfBidir)} iperf3 --bidir, ${ratio(busbw, streamBaseline(c))} one Node stream${streams}`,
      );
      const cpu = largeCpu(run);
      if (cpu) {
        const waiting =
          cpu.waiting !== null ? `, runnable but waiting for a CPU ${(cpu.waiting * 100).toFixed(0)} %` : '';
        out.push(
          `#   ranks on CPU ${(cpu.busy * 100).toFixed(0)} % of the op time${waiting}; ${cpu.usPerBusMiB.toFixed(0)} µs CPU per MiB of busbw (a rank sends and receives each such MiB)`,
        );
        if (c?.nodeStreamCpu) {
          const share = Math.min(1, result.machine.cpus / result.ranks);
          const ceiling = cpuCeiling(c.nodeStreamCpu, cpu, share);
          const who =
            share === 1
              ? 'a whole core per rank'
              : `${share.toFixed(2)} of a core per rank (${result.ranks} ranks on ${result.machine.cpus} vCPUs)`;
          const base = streamBaseline(c);
          out.push(
            `#   CPU-bound ceiling with ${who}: this engine ${gbit(ceiling.engine)} = ${ratio(ceiling.engine, base)} one Node stream; a ring with zero engine cost (pays the stream's ${(c.nodeStreamCpu.sourceUsPerMiB + c.nodeStreamCpu.sinkUsPerMiB).toFixed(0)} µs send + receive per MiB) ${gbit(ceiling.ideal)} = ${ratio(ceiling.ideal, base)}`,
          );
        }
      }
      const largest = largestBusbw(run);
      const last = run.rows.filter((r) => r.op === 'all_reduce').at(-1);
      if (largest !== null && last)
        out.push(
          `#   at the largest size (${last.bytes} B): ${gbit(largest)} = ${ratio(largest, c?.iperfOneWay)} iperf3 one-way`,
        );
    }
    const small = smallMedianUs(run);
    if (small !== null) out.push(`# ${run.label}: all_reduce 8 B–64 KiB median ${small.toFixed(1)} µs`);
  }
  const p2p = result.runs.find((r) => r.over === 'p2p' && r.bidirectional) ?? result.runs.find((r) => r.over === 'p2p');
  const lan = result.runs.find((r) => r.over === 'lan' && r.bidirectional === p2p?.bidirectional);
  if (p2p && lan) {
    const a = largeBusbw(p2p);
    const b = largeBusbw(lan);
    out.push(
      `# link choice: the same ring over thunderbolt-labelled p2p links vs forced onto the LAN: all_reduce busbw ${rate(a)} vs ${rate(b)} → ${ratio(a, b)}`,
    );
  }
  out.push(...glooLines(result));
  return out.join('\n');
}

/**
 * Whether a ring run and Gloo shared their links: Gloo binds one interface (the LAN), so a ring over the
 * point-to-point links is a different network, and its ratio says what choosing the links gives, not what the
 * ring engine gives on the same links.
 */
export function linksVsGloo(over: Over): string {
  return over === 'lan' ? 'same links: both on the LAN' : 'different links: the ring on the p2p links, Gloo on the LAN';
}

/** The ring runs' all-reduce busbw beside torch Gloo's on the same hosts, per size, as a ratio. */
export function glooLines(result: RingBenchResult): string[] {
  const g = result.gloo;
  if (!g) return [];
  if (!g.ok) return ['', `# ${g.reason}`];
  const runs = result.runs.filter((r) => r.rows.some((x) => x.op === 'all_reduce'));
  const out = [
    '',
    `# --- torch Gloo all_reduce (torch ${g.torch}, ${g.python}; GLOO_SOCKET_IFNAME=${g.iface}: Gloo binds one interface, so it runs over the LAN) vs this ring, busbw GB/s ---`,
  ];
  out.push(
    `#${'size (B)'.padStart(12)}${'Gloo'.padStart(9)}${runs.map((r) => `  ${r.label.padStart(28)} (×Gloo, ${linksVsGloo(r.over)})`).join('')}`,
  );
  for (const gr of g.rows) {
    const cells = runs.map((r) => {
      const row = r.rows.find((x) => x.op === 'all_reduce' && x.bytes === gr.bytes);
      return row
        ? `  ${row.busbw.toFixed(3).padStart(28)} ${`(${(row.busbw / gr.busbw).toFixed(2)}×)`.padStart(7)}`
        : `  ${'-'.padStart(28)} ${''.padStart(7)}`;
    });
    out.push(` ${String(gr.bytes).padStart(12)}${gr.busbw.toFixed(3).padStart(9)}${cells.join('')}`);
  }
  const large = g.rows.filter((r) => r.bytes >= LARGE);
  if (large.length > 0) {
    const glooLarge = large.reduce((s, r) => s + r.busbw, 0) / large.length;
    for (const r of runs) {
      const mine = largeBusbw(r);
      if (mine !== null)
        out.push(
          `# ${r.label}: all_reduce ≥ 8 MiB busbw ${gbit(mine)} = ${ratio(mine, glooLarge * 8e9)} torch Gloo (${gbit(glooLarge * 8e9)}); ${linksVsGloo(r.over)}`,
        );
    }
  }
  return out;
}
