/**
 * dst[i] = op(dst[i], src[i]) over regions of a KernelMemory. WASM SIMD for float32/int32 where
 * available (~5x a JS loop, STACK.md §5); a JS loop otherwise and for float16 (no f16 SIMD in WASM).
 */
import type { Dtype, ReduceOp } from './dtypes.js';
import { halfToNumber, numberToHalf } from './float16.js';
import type { KernelMemory } from './kernel-memory.js';
import { instantiateKernels, type WasmKernels } from './reduce-wasm.js';

export interface Reducer {
  readonly kind: 'wasm' | 'js';
  /** Offsets are byte offsets into the kernel memory; count is in elements. */
  reduce(op: ReduceOp, dtype: Dtype, dstOffset: number, srcOffset: number, count: number): void;
}

export function createReducer(memory: KernelMemory, prefer: 'wasm' | 'js' = 'wasm'): Reducer {
  const kernels = prefer === 'wasm' ? instantiateKernels(memory.memory) : null;
  const js = jsReducer(memory);
  if (!kernels) return js;
  return {
    kind: 'wasm',
    reduce(op, dtype, dst, src, count) {
      if (count <= 0) return;
      if (dtype === 'float16') return js.reduce(op, dtype, dst, src, count);
      kernels[`${op}_${dtype === 'float32' ? 'f32' : 'i32'}` as keyof WasmKernels](dst, src, count);
    },
  };
}

function jsReducer(memory: KernelMemory): Reducer {
  return {
    kind: 'js',
    reduce(op, dtype, dst, src, count) {
      if (count <= 0) return;
      const buffer = memory.buffer;
      if (dtype === 'float16') {
        reduceHalf(op, new Uint16Array(buffer, dst, count), new Uint16Array(buffer, src, count));
        return;
      }
      const d = dtype === 'float32' ? new Float32Array(buffer, dst, count) : new Int32Array(buffer, dst, count);
      const s = dtype === 'float32' ? new Float32Array(buffer, src, count) : new Int32Array(buffer, src, count);
      reduceArrays(op, d, s, dtype === 'int32');
    },
  };
}

/** The JS kernels on plain typed arrays (also used directly by tests as the reference). */
export function reduceArrays(op: ReduceOp, d: Float32Array | Int32Array, s: Float32Array | Int32Array, wrap: boolean): void {
  const n = d.length;
  if (op === 'sum') {
    if (wrap) for (let i = 0; i < n; i++) d[i] = ((d[i] as number) + (s[i] as number)) | 0;
    else for (let i = 0; i < n; i++) d[i] = (d[i] as number) + (s[i] as number);
  } else if (op === 'max') {
    for (let i = 0; i < n; i++) d[i] = Math.max(d[i] as number, s[i] as number);
  } else {
    for (let i = 0; i < n; i++) d[i] = Math.min(d[i] as number, s[i] as number);
  }
}

export function reduceHalf(op: ReduceOp, d: Uint16Array, s: Uint16Array): void {
  const n = d.length;
  for (let i = 0; i < n; i++) {
    const a = halfToNumber(d[i] as number);
    const b = halfToNumber(s[i] as number);
    if (op === 'sum') d[i] = numberToHalf(a + b);
    else if (Number.isNaN(a) || Number.isNaN(b)) d[i] = 0x7e00;
    else if (op === 'max' ? b > a || (b === a && Object.is(a, -0)) : b < a || (b === a && Object.is(b, -0))) d[i] = s[i] as number;
  }
}
