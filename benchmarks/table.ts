/** Shared table printer for the benchmark scripts: aligned text for people, or one JSON object with --json. */
export type BenchRow = Readonly<Record<string, string | number | boolean | null>>;

export function formatTable(rows: readonly BenchRow[]): string {
  if (rows.length === 0) return '(no rows)';
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cell = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((row) => cell(row[c]).length)));
  const line = (values: string[]): string => values.map((v, i) => (typeof rows[0]?.[columns[i]!] === 'number' ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ');
  return [line(columns), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map((row) => line(columns.map((c) => cell(row[c]))))].join('\n');
}

export function printTable(title: string, rows: readonly BenchRow[], json: boolean, note?: string): void {
  if (json) {
    process.stdout.write(JSON.stringify({ title, rows, note }) + '\n');
    return;
  }
  process.stdout.write(`\n## ${title}\n\n${formatTable(rows)}\n${note ? `\n${note}\n` : ''}`);
}
