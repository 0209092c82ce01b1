/** Element types and reduction operators shared by the kernels and the ring engine. */
export const DTYPES = ['float32', 'int32', 'float16'] as const;
export type Dtype = (typeof DTYPES)[number];
export const REDUCE_OPS = ['sum', 'max', 'min'] as const;
export type ReduceOp = (typeof REDUCE_OPS)[number];

/** float16 travels and is stored as raw bits in a Uint16Array (Node 20 has no Float16Array). */
export type RingArray = Float32Array | Int32Array | Uint16Array;

export const DTYPE_BYTES: Readonly<Record<Dtype, number>> = { float32: 4, int32: 4, float16: 2 };
/** Stable numeric codes for the wire (op headers). */
export const DTYPE_CODE: Readonly<Record<Dtype, number>> = { float32: 1, int32: 2, float16: 3 };
export const REDUCE_OP_CODE: Readonly<Record<ReduceOp, number>> = { sum: 1, max: 2, min: 3 };

export function dtypeOf(array: RingArray): Dtype {
  if (array instanceof Float32Array) return 'float32';
  if (array instanceof Int32Array) return 'int32';
  return 'float16';
}

export function isDtype(value: unknown): value is Dtype {
  return typeof value === 'string' && (DTYPES as readonly string[]).includes(value);
}

export function isReduceOp(value: unknown): value is ReduceOp {
  return typeof value === 'string' && (REDUCE_OPS as readonly string[]).includes(value);
}

/** A typed view of `count` elements of `dtype` at `byteOffset` of `buffer`. */
export function typedView(dtype: Dtype, buffer: ArrayBufferLike, byteOffset: number, count: number): RingArray {
  switch (dtype) {
    case 'float32':
      return new Float32Array(buffer, byteOffset, count);
    case 'int32':
      return new Int32Array(buffer, byteOffset, count);
    case 'float16':
      return new Uint16Array(buffer, byteOffset, count);
  }
}
