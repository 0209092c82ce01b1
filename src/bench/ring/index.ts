export {
  runRingBench,
  type RingBenchOptions,
  type RingBenchResult,
  type BenchRun,
  type Progress,
} from './run-bench.js';
export {
  formatReport,
  largeBusbw,
  cpuCeiling,
  largeCpu,
  largestBusbw,
  smallMedianUs,
  streamBaseline,
  type CpuUse,
} from './report.js';
export { BENCH_OPS, busFactor, sweepSizes, formatTable, makeRow, type BenchOp, type BenchRow } from './table.js';
export type { RankLauncher, RankMessage } from './launch.js';
export type { RankJob } from './rank-main.js';
