/**
 * IEEE 754 binary16 <-> number conversion for the JS float16 kernels. Sums are computed in float64
 * (exact for two binary16 operands) and rounded once to binary16, round-half-to-even, so the result is
 * the correctly rounded binary16 sum.
 */
const HALF_TO_NUMBER = (() => {
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
