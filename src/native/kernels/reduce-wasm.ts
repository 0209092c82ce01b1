import { REDUCE_WASM_BASE64 } from './reduce-wasm-bytes.js';

/**
 * The reduction kernels of reduce.wat. Their bytes are generated into reduce-wasm-bytes.ts by
 * `npm run build:wasm` (wabt, a dev dependency), so the package build needs no wabt; a test fails when the
 * committed bytes and reduce.wat differ, another that they compile and match the JS fallback.
 */

/**
 * Kernel export names: `${op}_${type}`, each (dstOffset, srcOffset, count) in bytes/elements. The f16
 * kernels take a count that is a multiple of 8 (the reducer runs the tail in JS).
 */
export type WasmKernelName = `${'sum' | 'max' | 'min'}_${'f32' | 'i32' | 'f16'}`;
export type WasmKernels = Record<WasmKernelName, (dst: number, src: number, count: number) => void> & {
  /** c += a·b, n×n f32 row-major at byte offsets; n a multiple of 4. */
  readonly matmul_f32: (a: number, b: number, c: number, n: number) => void;
};

let compiled: WebAssembly.Module | null | undefined;

/** The compiled module, or null where WebAssembly SIMD or threads are unavailable (the JS fallback is used then). */
export function reduceModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(Buffer.from(REDUCE_WASM_BASE64, 'base64'));
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

export function instantiateKernels(memory: WebAssembly.Memory): WasmKernels | null {
  const module = reduceModule();
  if (!module) return null;
  const instance = new WebAssembly.Instance(module, { env: { mem: memory } });
  return instance.exports as unknown as WasmKernels;
}
