/**
 * Shared table printer for the benchmark scripts: aligned text for people, or one JSON object with --json.
 * Each table says the machine's load average when it was printed: these machines are shared and noisy, and a
 * figure is only worth reading next to the load it was measured under.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

export type BenchRow = Readonly<Record<string, string | number | boolean | null>>;

export function formatTable(rows: readonly BenchRow[]): string {
  if (rows.length === 0) return '(no rows)';
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cell = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((row) => cell(row[c]).length)));
  const line = (values: string[]): string =>
    values
      .map((v, i) => (typeof rows[0]?.[columns[i]!] === 'number' ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ');
  return [
    line(columns),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map((row) => line(columns.map((c) => cell(row[c])))),
  ].join('\n');
}

export function machineLoad(): { loadavg1m: number; cpus: number } {
  return { loadavg1m: +loadavg()[0]!.toFixed(2), cpus: availableParallelism() };
}

/** The whole machine's CPU time so far (Linux /proc/stat, ms): busy (user, system, interrupts) and idle (with I/O wait). */
export function machineCpu(): { busyMs: number; idleMs: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
  return { busyMs: (user + nice + system + irq + softirq + steal) * 10, idleMs: (idle + iowait) * 10 };
}

/** Share of the machine's CPUs that were busy between two machineCpu() readings, in percent. */
export function busyPercent(a: ReturnType<typeof machineCpu>, b: ReturnType<typeof machineCpu>): number {
  const busy = b.busyMs - a.busyMs;
  const all = busy + b.idleMs - a.idleMs;
  return all > 0 ? Math.round((100 * busy) / all) : 0;
}

export function printTable(title: string, rows: readonly BenchRow[], json: boolean, note?: string): void {
  const load = machineLoad();
  if (json) {
    process.stdout.write(`${JSON.stringify({ title, rows, note, load })}\n`);
    return;
  }
  const loadLine = `load average ${load.loadavg1m} on ${load.cpus} CPUs`;
  process.stdout.write(`\n## ${title}\n\n${formatTable(rows)}\n${note ? `\n${note}\n` : ''}${loadLine}\n`);
}
