/**
 * IEEE 754 binary16 <-> number conversion for the JS float16 kernels. Sums are computed in float64
 * (exact for two binary16 operands) and rounded once to binary16, round-half-to-even, so the result is
 * the correctly rounded binary16 sum.
 */
/** binary16 bits → exact value (the kernels index it directly). */
export const HALF_TO_NUMBER = (() => {
  const table = new Float64Array(65536);
  for (let bits = 0; bits < 65536; bits++) {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >> 10) & 0x1f;
    const mantissa = bits & 0x3ff;
    if (exponent === 0) table[bits] = sign * mantissa * 2 ** -24;
    else if (exponent === 31) table[bits] = mantissa ? NaN : sign * Infinity;
    else table[bits] = sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
  }
  return table;
})();

export function halfToNumber(bits: number): number {
  return HALF_TO_NUMBER[bits & 0xffff] as number;
}

function roundHalfEven(value: number): number {
  const floor = Math.floor(value);
  const diff = value - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

export function numberToHalf(value: number): number {
  if (Number.isNaN(value)) return 0x7e00;
  const sign = value < 0 || Object.is(value, -0) ? 0x8000 : 0;
  const abs = Math.abs(value);
  if (abs >= 65520) return sign | 0x7c00; // 65520 is the halfway point above the largest finite half
  if (abs < 2 ** -14) return sign | roundHalfEven(abs * 2 ** 24); // subnormal; 1024 carries into the smallest normal
  let exponent = Math.floor(Math.log2(abs));
  if (2 ** exponent > abs) exponent--;
  else if (2 ** (exponent + 1) <= abs) exponent++;
  const mantissa = roundHalfEven((abs / 2 ** exponent - 1) * 1024);
  return sign | (((exponent + 15) << 10) + mantissa); // a mantissa of 1024 carries into the exponent
}

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/**
 * Fast binary16 rounding of a value first rounded to float32 (round-half-to-even, bit manipulation,
 * no Math.log2). For the sum of two binary16 values this equals numberToHalf of the exact sum: when the
 * float32 rounding loses bits the smaller operand is below a quarter of the larger one's half-ULP, so
 * no binary16 tie can be created (double rounding is harmless here; kernels.test.ts checks it).
 */
export function float32ToHalf(value: number): number {
  F32[0] = value;
  const x = U32[0] as number;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  // NaN → the canonical quiet NaN 0x7e00 (as numberToHalf and the WASM kernel): the sign of a NaN
  // produced by the FPU (inf − inf) differs between instructions, canonical bits do not.
  if (exp === 0xff) return mant ? 0x7e00 : sign | 0x7c00;
  const e = exp - 112; // rebias 127 → 15
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign; // below half the smallest subnormal
    mant |= 0x800000;
    const shift = 14 - e;
    const half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (half + (rem > mid || (rem === mid && (half & 1) === 1) ? 1 : 0));
  }
  const half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  return sign | (half + (rem > 0x1000 || (rem === 0x1000 && (half & 1) === 1) ? 1 : 0)); // a carry rolls into the exponent (→ inf at the top)
}
