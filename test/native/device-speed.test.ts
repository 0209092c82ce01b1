import t from 'tap';
import { measureDeviceSpeed, measureMatmulGflops, measureMemoryBandwidth } from '../../src/native/device-speed.js';
import measureDevice from '../../src/native/device-speed-task.js';

t.test('memory bandwidth: a positive figure from the SIMD read loop', async (t) => {
  const r = measureMemoryBandwidth(8 * 2 ** 20, 50);
  t.equal(r.kernel, 'wasm');
  t.ok(r.gbps > 0.1, `${r.gbps} GB/s`);
});

t.test('matmul: a positive GFLOP/s figure', async (t) => {
  t.ok(measureMatmulGflops(64, 20) > 0.01);
});

t.test('the pool task clamps what it is asked and reports both figures', async (t) => {
  const r = measureDevice({ bufferBytes: 4 * 2 ** 20, memoryBudgetMs: 20, computeBudgetMs: 20 });
  t.ok(r.memoryBandwidthGBps > 0 && r.gflops > 0);
  t.ok(r.elapsedMs >= 0);
  const bad = measureDevice({ bufferBytes: 'lots', memoryBudgetMs: -1, computeBudgetMs: 5 });
  t.ok(bad.gflops > 0, 'bad options fall back to the defaults');
  t.same(Object.keys(measureDeviceSpeed({ bufferBytes: 2 ** 20, memoryBudgetMs: 1, computeBudgetMs: 1 })).sort(), [
    'elapsedMs',
    'gflops',
    'kernel',
    'memoryBandwidthGBps',
  ]);
});
