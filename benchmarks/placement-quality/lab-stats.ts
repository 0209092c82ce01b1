/** The figures of the measured placement-quality benchmark, from per-option measured and predicted step times. */

export interface Measured {
  /** cycle key of the option (lab-options.ts `cycleKey`) */
  readonly key: string;
  readonly measuredMs: number;
  readonly predictedMs: number;
}

/** (measured − predicted) / predicted, percent. */
export function errorPercent(measuredMs: number, predictedMs: number): number {
  return ((measuredMs - predictedMs) / predictedMs) * 100;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export interface QualitySummary {
  readonly options: number;
  readonly medianAbsErrorPercent: number;
  readonly worstAbsErrorPercent: number;
  readonly best: Measured;
  /** measured chosen ÷ measured best − 1, percent (0 when the chosen one is the best) */
  readonly chosenGapPercent: number | null;
  /** measured tokens/s of the chosen option ÷ exo's (the same tokens per step, so exo's step ÷ chosen's) */
  readonly vsExo: number | null;
}

export function summarize(rows: readonly Measured[], chosenKey: string, exoKey: string | undefined): QualitySummary {
  if (rows.length === 0) throw new Error('no measured options');
  const errors = rows.map((r) => Math.abs(errorPercent(r.measuredMs, r.predictedMs)));
  const best = rows.reduce((b, r) => (r.measuredMs < b.measuredMs ? r : b));
  const chosen = rows.find((r) => r.key === chosenKey);
  const exo = exoKey === undefined ? undefined : rows.find((r) => r.key === exoKey);
  return {
    options: rows.length,
    medianAbsErrorPercent: median(errors),
    worstAbsErrorPercent: Math.max(...errors),
    best,
    chosenGapPercent: chosen ? (chosen.measuredMs / best.measuredMs - 1) * 100 : null,
    vsExo: chosen && exo ? exo.measuredMs / chosen.measuredMs : null,
  };
}

/** Median |error| of the options in a group and of the rest (e.g. the options through the slow host and the others). */
export function errorSplit(
  rows: readonly Measured[],
  inGroup: (key: string) => boolean,
): {
  group: { options: number; medianAbsErrorPercent: number };
  rest: { options: number; medianAbsErrorPercent: number };
} {
  const of = (xs: readonly Measured[]) => ({
    options: xs.length,
    medianAbsErrorPercent: median(xs.map((r) => Math.abs(errorPercent(r.measuredMs, r.predictedMs)))),
  });
  return { group: of(rows.filter((r) => inGroup(r.key))), rest: of(rows.filter((r) => !inGroup(r.key))) };
}

/** How long the run took and the 1-minute load average it ran under (sampled before every bench), as printed. */
export function runConditions(startedAtMs: number, endedAtMs: number, loads: readonly number[]): string {
  const minutes = ((endedAtMs - startedAtMs) / 60_000).toFixed(1);
  if (loads.length === 0) return `ran ${minutes} min`;
  const lo = Math.min(...loads).toFixed(1);
  const hi = Math.max(...loads).toFixed(1);
  return `ran ${minutes} min; load average ${lo === hi ? lo : `${lo}–${hi}`} (1-minute, sampled at ${loads.length} points)`;
}
