/** The model-placement benchmark's table and summary lines for one lab shape, from a sweep's result. */
import type { BenchRow } from '../table.js';
import { runConditions } from '../placement-quality/lab-stats.js';
import { absError, type SweepResult } from './sweep.js';

const round = (x: number, digits = 1): number => +x.toFixed(digits);
const fmt = (x: number | null | undefined, digits = 1): string =>
  x === null || x === undefined || Number.isNaN(x) ? 'n/a' : x.toFixed(digits);

/** One row per option, fastest measured decode first. */
export function optionRows(r: SweepResult): BenchRow[] {
  return [...r.options]
    .sort((a, b) => a.decodeMs - b.decodeMs)
    .map((o) => {
      const marks = [
        o.key === r.plannerDecode.key ? 'planner (decode)' : '',
        o.key === r.plannerPrefillKey ? 'planner (prefill)' : '',
        o.key === r.exoKey ? 'exo rule' : '',
        o.key === r.decode.best.key ? 'best decode' : '',
        o.key === r.prefill.best.key ? 'best prefill' : '',
      ].filter(Boolean);
      return {
        option: o.label,
        nodes: o.nodes.length,
        layers: o.layers.join('/'),
        'decode pred ms': round(o.predictedDecodeMs, 2),
        'decode ms': round(o.decodeMs, 2),
        'decode |err| %': round(absError(o.decodeMs, o.predictedDecodeMs)),
        'prefill pred ms': round(o.predictedPrefillMs),
        'prefill ms': round(o.prefillMs),
        'prefill |err| %': round(absError(o.prefillMs, o.predictedPrefillMs)),
        'planned addrs': o.overPlannedAddresses ? 'yes' : 'NO',
        '': marks.join(', '),
      };
    });
}

/** The summary the README and docs/placement.md quote: errors, the planner's choices, exo's rule. */
export function summaryLines(r: SweepResult, shapeB: boolean, startedAt: number, endedAt: number): string[] {
  const labelOf = (key: string | undefined): string => r.options.find((o) => o.key === key)?.label ?? 'n/a';
  const exo = r.options.find((o) => o.key === r.exoKey);
  const planner = r.options.find((o) => o.key === r.plannerDecode.key);
  const plannerPrefill = r.options.find((o) => o.key === r.plannerPrefillKey);
  const ratio = (a: number | undefined, b: number | undefined): string =>
    a === undefined || b === undefined ? 'n/a' : (b / a).toFixed(2);
  const lines = [
    `${r.options.length} options, ${r.options[0]?.runs.length ?? 0} run(s) each (median; each ${r.framework ? 'predicted with workload.framework torch' : 'predicted from the kernel device figures'}${r.calibration ? ', after a torch calibration' : ''})`,
    `median |error| decode ${fmt(r.decode.medianAbsErrorPercent)} % (worst ${fmt(r.decode.worstAbsErrorPercent)} %), ` +
      `prefill ${fmt(r.prefill.medianAbsErrorPercent)} % (worst ${fmt(r.prefill.worstAbsErrorPercent)} %) over every option run (target ≤ 20 % each)`,
    `the planner's decode choice ${labelOf(r.plannerDecode.key)} (its own unpinned run: decode ${fmt(r.plannerDecode.run.decodeMs, 2)} ms, ` +
      `prefill ${fmt(r.plannerDecode.run.prefillMs)} ms): ${fmt(r.decode.chosenGapPercent)} % slower in decode than the best measured ` +
      `${labelOf(r.decode.best.key)} (target ≤ 10 %)`,
    `the planner's prefill choice ${labelOf(r.plannerPrefillKey)}: ${fmt(r.prefill.chosenGapPercent)} % slower in prefill than the best ` +
      `measured ${labelOf(r.prefill.best.key)} (target ≤ 10 %)`,
    `exo's rule ${labelOf(r.exoKey)}${r.exoAddressesDiffer ? ' (its label addresses differ from the measured ones it ran on)' : ''}: ` +
      `planner tok/s ÷ exo's tok/s, decode ${ratio(planner?.decodeMs, exo?.decodeMs)}×, ` +
      `prefill ${ratio(plannerPrefill?.prefillMs, exo?.prefillMs)}×${shapeB ? ' (target ≥ 1.5×)' : ''}`,
    `every option ran its torch ranks over the planned addresses: ${r.options.every((o) => o.overPlannedAddresses) ? 'yes' : 'NO'}`,
    runConditions(startedAt, endedAt, r.loads),
  ];
  return lines;
}
