/**
 * The f32 matrix-multiply kernel of the device-speed figure and of the pipeline workload's compute: one n×n
 * multiply-accumulate c += a·b (2n³ FLOPs) on matrices that live in kernel memory, through the SIMD WebAssembly
 * kernel (reduce.wat, `matmul_f32`) where it loads and n is a multiple of 4, else the same i-k-j loop in JS. The
 * measurement and the workload share one kernel, so the planner's FLOP/s figure is the speed the work runs at.
 */
import { KernelMemory } from './kernel-memory.js';
import { instantiateKernels } from './reduce-wasm.js';

/** One n×n f32 multiply-accumulate c += a·b (i-k-j order): the JS path, and the reference the tests compare with. */
export function matmulJs(a: Float32Array, b: Float32Array, c: Float32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const row = i * n;
    for (let k = 0; k < n; k++) {
      const aik = a[row + k] as number;
      const bk = k * n;
      for (let j = 0; j < n; j++) c[row + j] = (c[row + j] as number) + aik * (b[bk + j] as number);
    }
  }
}

export class MatmulKernel {
  readonly n: number;
  readonly kind: 'wasm' | 'js';
  readonly a: Float32Array;
  readonly b: Float32Array;
  readonly c: Float32Array;
  readonly #run: () => void;

  constructor(n: number, prefer: 'wasm' | 'js' = 'wasm') {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`matmul side must be a positive integer, got ${n}`);
    this.n = n;
    const bytes = n * n * 4;
    const memory = new KernelMemory(3 * bytes + 64);
    const [ra, rb, rc] = [memory.alloc(bytes), memory.alloc(bytes), memory.alloc(bytes)];
    this.a = new Float32Array(memory.buffer, ra.offset, n * n);
    this.b = new Float32Array(memory.buffer, rb.offset, n * n);
    this.c = new Float32Array(memory.buffer, rc.offset, n * n);
    const kernels = prefer === 'wasm' && n % 4 === 0 ? instantiateKernels(memory.memory) : null;
    this.kind = kernels ? 'wasm' : 'js';
    this.#run = kernels
      ? () => kernels.matmul_f32(ra.offset, rb.offset, rc.offset, n)
      : () => matmulJs(this.a, this.b, this.c, n);
  }

  /** c += a·b once: 2n³ FLOPs. */
  run(): void {
    this.#run();
  }

  get flopsPerRun(): number {
    return 2 * this.n ** 3;
  }
}
