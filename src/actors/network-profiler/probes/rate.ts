/** Pure arithmetic for measurements: steady-state rate from arrival samples, and medians. */

/** Arrival samples: [milliseconds since the first byte, cumulative bytes]. */
export type Sample = readonly [number, number];

/**
 * Rate over the part of the transfer after `skip` of its duration. The start is discarded because TCP slow start
 * and the token bucket of a tbf-shaped link (which lets its burst through at line rate) both distort it.
 */
export function steadyRate(
  samples: readonly Sample[],
  skip = 0.3,
): { bytes: number; seconds: number; steadyBytes: number; steadySeconds: number; bps: number } {
  const last = samples[samples.length - 1];
  if (!last) return { bytes: 0, seconds: 0, steadyBytes: 0, steadySeconds: 0, bps: 0 };
  const [tEnd, total] = last;
  const cut = tEnd * skip;
  let from: Sample = [0, 0];
  for (const s of samples) {
    if (s[0] > cut) break;
    from = s;
  }
  const steadyBytes = total - from[1];
  const steadyMs = tEnd - from[0];
  const wholeBps = tEnd > 0 ? (total * 8) / (tEnd / 1000) : 0;
  const bps = steadyMs >= 5 && steadyBytes > 0 ? (steadyBytes * 8) / (steadyMs / 1000) : wholeBps;
  return { bytes: total, seconds: tEnd / 1000, steadyBytes, steadySeconds: steadyMs / 1000, bps };
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
