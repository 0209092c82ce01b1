/** Plain-text tables and units for the CLI's readable output. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '  (none)\n';
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    `  ${cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()}\n`;
  return line(headers) + rows.map(line).join('');
}

export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return '?';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v >= 100 || u === 0 ? 0 : 1)} ${units[u]}`;
}

/** Link speeds are bits per second (as iperf3 and the profiler report them). */
export function formatBitsPerSecond(bps: number | undefined): string {
  if (bps === undefined) return 'not measured';
  if (bps >= 1e9) return `${(bps / 1e9).toFixed(bps >= 1e10 ? 0 : 2)} Gbit/s`;
  if (bps >= 1e6) return `${(bps / 1e6).toFixed(0)} Mbit/s`;
  return `${(bps / 1e3).toFixed(0)} kbit/s`;
}

export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

/** "5 GiB", "512MiB", "1e9" → bytes. */
export function parseBytes(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?(?:e\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?$/i.exec(text.trim());
  if (!m) return undefined;
  const unit = (m[2] ?? 'b').toLowerCase();
  const pow = { b: 0, k: 1, kb: 1, kib: 1, m: 2, mb: 2, mib: 2, g: 3, gb: 3, gib: 3, t: 4, tb: 4, tib: 4 }[unit] ?? 0;
  const value = Number(m[1]) * 1024 ** pow;
  return Number.isFinite(value) ? Math.round(value) : undefined;
}
