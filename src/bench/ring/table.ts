/**
 * nccl-tests conventions (docs/ring.md): busbw factors, the results table and "Avg bus bandwidth".
 * GB/s are 1e9 bytes per second. Pure: no I/O.
 */
export const BENCH_OPS = ['all_reduce', 'all_gather', 'broadcast', 'sendrecv'] as const;
export type BenchOp = (typeof BENCH_OPS)[number];

/** busbw = algbw × factor: 2(n−1)/n for all-reduce, (n−1)/n for all-gather, 1 for broadcast and send/recv. */
export function busFactor(op: BenchOp, n: number): number {
  if (n <= 1) return op === 'all_reduce' || op === 'all_gather' ? 0 : 1;
  if (op === 'all_reduce') return (2 * (n - 1)) / n;
  if (op === 'all_gather') return (n - 1) / n;
  return 1;
}

export interface BenchRow {
  readonly op: BenchOp;
  /** nccl "size": bytes of the whole buffer (all-gather: the total output). */
  readonly bytes: number;
  /** nccl "count": elements per rank. */
  readonly count: number;
  readonly type: string;
  readonly redop: string;
  readonly root: number;
  /** Mean over ranks of the mean time per op, µs. */
  readonly timeUs: number;
  /** Median over iterations (rank 0), µs. */
  readonly medianUs: number;
  readonly algbw: number;
  readonly busbw: number;
  /** Wrong elements summed over ranks; null when not checked. */
  readonly wrong: number | null;
  /** Mean over ranks of process CPU time per op, µs (absent when the ranks did not report it). */
  readonly cpuUs?: number;
  /** Mean over ranks of the time per op the rank waited for a CPU while runnable, µs. */
  readonly runWaitUs?: number;
}

export function makeRow(op: BenchOp, n: number, fields: Omit<BenchRow, 'op' | 'algbw' | 'busbw'>): BenchRow {
  const algbw = fields.timeUs > 0 ? fields.bytes / (fields.timeUs * 1e-6) / 1e9 : 0;
  return { op, ...fields, algbw, busbw: algbw * busFactor(op, n) };
}

/** Sizes from -b to -e multiplying by -f (nccl-tests' sweep). */
export function sweepSizes(minBytes: number, maxBytes: number, factor: number): number[] {
  const sizes: number[] = [];
  for (let s = minBytes; s <= maxBytes; s = Math.max(s + 1, Math.round(s * factor))) sizes.push(s);
  return sizes;
}

export function averageBusbw(rows: readonly BenchRow[]): number {
  return rows.length === 0 ? 0 : rows.reduce((sum, r) => sum + r.busbw, 0) / rows.length;
}

const pad = (value: string, width: number) => value.padStart(width);
const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** The nccl-tests table for one op, with a median column added (latency targets are medians). */
export function formatTable(op: BenchOp, rows: readonly BenchRow[], title: string): string {
  const lines = [
    `# ${title}`,
    `#${pad('size', 12)}${pad('count', 13)}${pad('type', 9)}${pad('redop', 7)}${pad('root', 6)}${pad('time', 11)}${pad('algbw', 8)}${pad('busbw', 8)}${pad('#wrong', 8)}${pad('median', 11)}`,
    `#${pad('(B)', 12)}${pad('(elements)', 13)}${pad('', 9)}${pad('', 7)}${pad('', 6)}${pad('(us)', 11)}${pad('(GB/s)', 8)}${pad('(GB/s)', 8)}${pad('', 8)}${pad('(us)', 11)}`,
  ];
  for (const r of rows) {
    lines.push(
      ` ${pad(String(r.bytes), 12)}${pad(String(r.count), 13)}${pad(r.type, 9)}${pad(r.redop, 7)}${pad(String(r.root), 6)}${pad(fixed(r.timeUs, 1), 11)}${pad(fixed(r.algbw, 3), 8)}${pad(fixed(r.busbw, 3), 8)}${pad(r.wrong === null ? 'N/A' : String(r.wrong), 8)}${pad(fixed(r.medianUs, 1), 11)}`,
    );
  }
  const wrong = rows.reduce((sum, r) => sum + (r.wrong ?? 0), 0);
  lines.push(`# Out of bounds values : ${wrong} ${wrong === 0 ? 'OK' : 'FAILED'}`);
  lines.push(`# Avg bus bandwidth    : ${fixed(averageBusbw(rows), 3)} GB/s (${op})`);
  return lines.join('\n');
}

/** Bits per second → "0.94 Gbit/s". */
export function gbit(bitsPerSecond: number): string {
  return `${(bitsPerSecond / 1e9).toFixed(2)} Gbit/s`;
}
