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
  const times = run.rows.filter((r) => r.op === 'all_reduce' && r.bytes <= SMALL).map((r) => r.medianUs).sort((a, b) => a - b);
  return times.length === 0 ? null : (times[Math.floor(times.length / 2)] as number);
}

const ratio = (a: number | null, b: number | null | undefined) => (a !== null && b ? `${(a / b).toFixed(2)}×` : 'n/a');
const rate = (v: number | null | undefined) => (v ? gbit(v) : 'n/a');

function capacityLine(over: Over, c: Capacity): string {
  return `# capacity ${over} (host 0 → host 1): iperf3 one-way ${rate(c.iperfOneWay)}, iperf3 --bidir ${rate(c.iperfBidir)} (both directions added), one Node TCP stream ${rate(c.nodeStream)}`;
}

export function formatReport(result: RingBenchResult): string {
  const out: string[] = [];
  out.push(`# torus ring benchmark: ${result.ranks} ranks, mode ${result.mode}, p2p links ${result.linkRate ?? 'unshaped'}, LAN ${result.lanRate ?? 'unshaped'}`);
  const m = result.machine;
  out.push(`# machine: ${m.cpus} vCPUs, load average ${m.loadBefore.toFixed(1)} → ${m.loadAfter.toFixed(1)}${m.loadBefore > m.cpus ? ' (shared and busy: expect noisy, CPU-bound numbers)' : ''}`);
  for (const run of result.runs) {
    for (const op of BENCH_OPS) {
      const rows = run.rows.filter((r) => r.op === op);
      if (rows.length > 0) out.push('', formatTable(op, rows, `${op} — ${run.label} (kernel ${run.kernel})`));
    }
    for (const e of run.errors) out.push(`# ERROR ${e}`);
  }
  out.push('', '# --- links and ratios ---');
  for (const [over, c] of Object.entries(result.capacity) as [Over, Capacity][]) out.push(capacityLine(over, c));
  for (const run of result.runs) {
    const busbw = largeBusbw(run);
    const c = result.capacity[run.over];
    if (busbw !== null) {
      out.push(`# ${run.label}: all_reduce large-message busbw ${gbit(busbw)} = ${ratio(busbw, c?.iperfOneWay)} iperf3 one-way, ${ratio(busbw, c?.iperfBidir)} iperf3 --bidir, ${ratio(busbw, c?.nodeStream)} one Node stream`);
      const largest = largestBusbw(run);
      const last = run.rows.filter((r) => r.op === 'all_reduce').at(-1);
      if (largest !== null && last) out.push(`#   at the largest size (${last.bytes} B): ${gbit(largest)} = ${ratio(largest, c?.iperfOneWay)} iperf3 one-way`);
    }
    const small = smallMedianUs(run);
    if (small !== null) out.push(`# ${run.label}: all_reduce 8 B–64 KiB median ${small.toFixed(1)} µs`);
  }
  const p2p = result.runs.find((r) => r.over === 'p2p' && r.bidirectional) ?? result.runs.find((r) => r.over === 'p2p');
  const lan = result.runs.find((r) => r.over === 'lan' && r.bidirectional === p2p?.bidirectional);
  if (p2p && lan) {
    const a = largeBusbw(p2p);
    const b = largeBusbw(lan);
    out.push(`# link choice: the same ring over thunderbolt-labelled p2p links vs forced onto the LAN: all_reduce busbw ${rate(a)} vs ${rate(b)} → ${ratio(a, b)}`);
  }
  return out.join('\n');
}
