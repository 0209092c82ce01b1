/**
 * dst[i] = op(dst[i], src[i]) over regions of a KernelMemory. WASM SIMD where available (~5x a JS
 * loop for float32 (docs/ring.md); for float16 — which WASM cannot do arithmetic in — the kernel widens
 * to f32 and rounds back in SIMD integer ops, bit-identical to the JS loop); a JS loop otherwise.
 */
import type { Dtype, ReduceOp } from './dtypes.js';
import { HALF_TO_NUMBER, float32ToHalf } from './float16.js';
import type { KernelMemory } from './kernel-memory.js';
import { instantiateKernels } from './reduce-wasm.js';

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
      if (dtype === 'float16') {
        const body = count & ~7; // 8 halves per SIMD step; the < 8 left over go through the JS loop
        if (body > 0) kernels[`${op}_f16`](dst, src, body);
        if (body < count) js.reduce(op, dtype, dst + body * 2, src + body * 2, count - body);
        return;
      }
      kernels[`${op}_${dtype === 'float32' ? 'f32' : 'i32'}`](dst, src, count);
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
export function reduceArrays(
  op: ReduceOp,
  d: Float32Array | Int32Array,
  s: Float32Array | Int32Array,
  wrap: boolean,
): void {
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
  if (op === 'sum') {
    const T = HALF_TO_NUMBER;
    for (let i = 0; i < n; i++) d[i] = float32ToHalf((T[d[i] as number] as number) + (T[s[i] as number] as number));
    return;
  }
  // max/min on the bits: an order-preserving integer key (−0 < +0, like Math.max), NaN propagates.
  const max = op === 'max';
  for (let i = 0; i < n; i++) {
    const a = d[i] as number;
    const b = s[i] as number;
    if ((a & 0x7fff) > 0x7c00 || (b & 0x7fff) > 0x7c00) {
      d[i] = 0x7e00;
      continue;
    }
    const ka = a & 0x8000 ? 0x7fff - (a & 0x7fff) : a | 0x8000;
    const kb = b & 0x8000 ? 0x7fff - (b & 0x7fff) : b | 0x8000;
    if (max ? kb > ka : kb < ka) d[i] = b;
  }
}
