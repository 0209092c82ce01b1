import t from 'tap';
import { measureDeviceSpeed, measureMatmulGflops, measureMemoryBandwidth } from '../../src/native/device-speed.js';
import measureDevice from '../../src/native/device-speed-task.js';
import { MatmulKernel, matmulJs } from '../../src/native/kernels/matmul.js';

t.test('memory bandwidth: a positive figure from the SIMD read loop', async (t) => {
  const r = measureMemoryBandwidth(8 * 2 ** 20, 50);
  t.equal(r.kernel, 'wasm');
  t.ok(r.gbps > 0.1, `${r.gbps} GB/s`);
});

t.test('matmul: a positive GFLOP/s figure, from the SIMD kernel', async (t) => {
  const r = measureMatmulGflops(64, 20);
  t.equal(r.kernel, 'wasm');
  t.ok(r.gflops > 0.01, `${r.gflops} GFLOP/s`);
  t.equal(measureMatmulGflops(64, 20, 'js').kernel, 'js', 'the JS loop when asked');
  t.equal(measureMatmulGflops(30, 5).kernel, 'js', 'a side that is not a multiple of 4 runs the JS loop');
});

t.test('the SIMD matmul computes what the JS reference does, accumulating into c', async (t) => {
  for (const n of [4, 12, 96]) {
    const wasm = new MatmulKernel(n);
    t.equal(wasm.kind, 'wasm');
    const a = Float32Array.from({ length: n * n }, (_, i) => ((i * 37) % 11) - 5.5);
    const b = Float32Array.from({ length: n * n }, (_, i) => ((i * 13) % 7) * 0.25 - 0.75);
    const c0 = Float32Array.from({ length: n * n }, (_, i) => (i % 3) - 1);
    wasm.a.set(a);
    wasm.b.set(b);
    wasm.c.set(c0);
    wasm.run();
    wasm.run();
    const expected = Float32Array.from(c0);
    matmulJs(a, b, expected, n);
    matmulJs(a, b, expected, n);
    // Small multiples of 1/4: every product and sum is exact in f32 (and in the JS loop's doubles), so both agree.
    t.same([...wasm.c], [...expected], `n=${n}: bit for bit after two runs`);
  }
  t.throws(() => new MatmulKernel(0), RangeError);
});

t.test('the pool task clamps what it is asked and reports both figures', async (t) => {
  const r = measureDevice({ bufferBytes: 4 * 2 ** 20, memoryBudgetMs: 20, computeBudgetMs: 20 });
  t.ok(r.memoryBandwidthGBps > 0 && r.gflops > 0);
  t.ok(r.elapsedMs >= 0);
  const bad = measureDevice({ bufferBytes: 'lots', memoryBudgetMs: -1, computeBudgetMs: 5 });
  t.ok(bad.gflops > 0, 'bad options fall back to the defaults');
  t.same(Object.keys(measureDeviceSpeed({ bufferBytes: 2 ** 20, memoryBudgetMs: 1, computeBudgetMs: 1 })).sort(), [
    'computeKernel',
    'elapsedMs',
    'gflops',
    'kernel',
    'memoryBandwidthGBps',
  ]);
});
