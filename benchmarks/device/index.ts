/**
 * The device-speed kernels side by side, SIMD WebAssembly against the same loop in JS, in one run: the f32
 * matmul behind the GFLOP/s figure (and the pipeline workload's compute) and the streaming read behind the memory
 * bandwidth. The figures alternate (wasm, js, wasm, js, …) so machine noise falls on both; the median counts.
 *   node build/benchmarks/device/index.js [--quick] [--json]
 */
import { measureMatmulGflops, measureMemoryBandwidth, MATMUL_N } from '../../src/native/device-speed.js';
import { printTable, type BenchRow } from '../table.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const rounds = args.includes('--quick') ? 3 : 7;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};
const r2 = (x: number): number => Math.round(x * 100) / 100;

const matmul = { wasm: [] as number[], js: [] as number[] };
for (let i = 0; i < rounds; i++)
  for (const kind of ['wasm', 'js'] as const) {
    const r = measureMatmulGflops(MATMUL_N, 300, kind);
    if (r.kernel !== kind) throw new Error(`asked for the ${kind} matmul, ran ${r.kernel}`);
    matmul[kind].push(r.gflops);
  }
const read = { wasm: [] as number[] };
for (let i = 0; i < rounds; i++) read.wasm.push(measureMemoryBandwidth(64 * 2 ** 20, 300).gbps);

const rows: BenchRow[] = [
  {
    kernel: `f32 matmul ${MATMUL_N}×${MATMUL_N}, GFLOP/s`,
    'wasm simd': r2(median(matmul.wasm)),
    js: r2(median(matmul.js)),
    'wasm / js': r2(median(matmul.wasm) / median(matmul.js)),
  },
  { kernel: 'streaming read 64 MiB, GB/s', 'wasm simd': r2(median(read.wasm)), js: '-', 'wasm / js': '-' },
];
printTable(
  `device-speed kernels (median of ${rounds} alternating runs, one core)`,
  rows,
  json,
  'A node measures with the wasm kernels wherever WebAssembly SIMD loads (the JS loop otherwise); the pipeline workload runs the same matmul.',
);
