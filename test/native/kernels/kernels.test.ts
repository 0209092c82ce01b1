import t from 'tap';
import {
  KernelMemory,
  createReducer,
  reduceArrays,
  reduceHalf,
  float32ToHalf,
  halfToNumber,
  numberToHalf,
  REDUCE_OPS,
} from '../../../src/native/kernels/index.js';
import { reduceModule } from '../../../src/native/kernels/reduce-wasm.js';

t.test('embedded WASM module compiles (SIMD + shared memory available on Node 20)', async (t) => {
  t.ok(reduceModule(), 'module compiled');
  t.equal(createReducer(new KernelMemory()).kind, 'wasm');
  t.equal(createReducer(new KernelMemory(), 'js').kind, 'js');
});

t.test('WASM kernels match the JS loops bit for bit, tails included', async (t) => {
  const memory = new KernelMemory();
  const wasm = createReducer(memory, 'wasm');
  for (const dtype of ['float32', 'int32'] as const) {
    for (const op of REDUCE_OPS) {
      for (const count of [0, 1, 3, 7, 8, 9, 31, 1000, 4099]) {
        const a = memory.alloc(count * 4);
        const b = memory.alloc(count * 4);
        const make = (offset: number) =>
          dtype === 'float32'
            ? new Float32Array(memory.buffer, offset, count)
            : new Int32Array(memory.buffer, offset, count);
        const da = make(a.offset);
        const db = make(b.offset);
        for (let i = 0; i < count; i++) {
          da[i] = dtype === 'float32' ? Math.sin(i) * 1000 : (i * 2654435761) | 0;
          db[i] = dtype === 'float32' ? Math.cos(i * 3) * 1000 : (i * 40503 + 7) | 0;
        }
        const expected = dtype === 'float32' ? Float32Array.from(da) : Int32Array.from(da);
        reduceArrays(op, expected, db, dtype === 'int32');
        wasm.reduce(op, dtype, a.offset, b.offset, count);
        t.same(Array.from(da), Array.from(expected), `${op} ${dtype} × ${count}`);
        memory.free(a);
        memory.free(b);
      }
    }
  }
});

t.test(
  'float16 WASM kernels match the JS loops bit for bit: every bit pattern, NaN, infinities, subnormals, tails',
  async (t) => {
    const memory = new KernelMemory();
    const wasm = createReducer(memory, 'wasm');
    const js = createReducer(memory, 'js');
    const N = 65536 * 8;
    const regions = [0, 1, 2].map(() => memory.alloc(N * 2));
    const [A, B, C] = regions.map((r) => new Uint16Array(memory.buffer, r.offset, N)) as [
      Uint16Array,
      Uint16Array,
      Uint16Array,
    ];
    let seed = 99;
    const rand = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed >>> 16;
    };
    for (const op of REDUCE_OPS) {
      for (let round = 0; round < 3; round++) {
        // Every a against 8 structured b (round 0: ±0, ±inf, NaN, subnormal, normals) or random b.
        const structured = [0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x3c00, 0xbbff];
        for (let i = 0; i < N; i++) {
          A[i] = i & 0xffff;
          B[i] = round === 0 ? (structured[i >>> 16] as number) : rand();
        }
        C.set(A);
        js.reduce(op, 'float16', regions[2]!.offset, regions[1]!.offset, N);
        wasm.reduce(op, 'float16', regions[0]!.offset, regions[1]!.offset, N);
        let bad = 0;
        let first = '';
        for (let i = 0; i < N; i++) {
          if (A[i] !== C[i]) {
            bad++;
            first ||= `a=${(i & 0xffff).toString(16)} b=${B[i]!.toString(16)}: wasm ${A[i]!.toString(16)}, js ${C[i]!.toString(16)}`;
          }
        }
        t.equal(bad, 0, `${op} float16 round ${round} ${first}`);
      }
      for (const count of [0, 1, 7, 8, 9, 15, 17, 1001]) {
        for (let i = 0; i < count; i++) {
          A[i] = rand();
          B[i] = rand();
        }
        C.set(A.subarray(0, count));
        js.reduce(op, 'float16', regions[2]!.offset, regions[1]!.offset, count);
        wasm.reduce(op, 'float16', regions[0]!.offset, regions[1]!.offset, count);
        t.same(
          Array.from(A.subarray(0, count)),
          Array.from(C.subarray(0, count)),
          `${op} float16 × ${count} (SIMD body + JS tail)`,
        );
      }
    }
    const d = new Uint16Array(memory.buffer, regions[0]!.offset, 8);
    const s = new Uint16Array(memory.buffer, regions[1]!.offset, 8);
    d.set([0x7c00, 0x7bff, 0x0001, 0x8000, 0x3c01, 0x7e01, 0xfe00, 0x0200].map(Number));
    s.set([0xfc00, 0x7bff, 0x8001, 0x0000, 0x1000, 0x3c00, 0x3c00, 0x0200].map(Number));
    wasm.reduce('sum', 'float16', regions[0]!.offset, regions[1]!.offset, 8);
    t.same(
      Array.from(d),
      [0x7e00, 0x7c00, 0x0000, 0x0000, 0x3c02, 0x7e00, 0x7e00, 0x0400],
      'inf − inf = NaN (canonical), overflow → inf, subnormals, −0 + +0 = +0, ties to even, NaN canonical',
    );
  },
);

t.test('int32 sum wraps like the hardware', async (t) => {
  const d = new Int32Array([0x7fffffff, -0x80000000]);
  reduceArrays('sum', d, new Int32Array([1, -1]), true);
  t.same(Array.from(d), [-0x80000000, 0x7fffffff]);
});

t.test('float16: every bit pattern round-trips, sums are correctly rounded', async (t) => {
  let bad = 0;
  for (let bits = 0; bits < 65536; bits++) {
    const value = halfToNumber(bits);
    if (Number.isNaN(value)) continue;
    if (numberToHalf(value) !== bits) bad++;
  }
  t.equal(bad, 0, 'non-NaN halves convert back to the same bits');
  t.equal(numberToHalf(65504), 0x7bff);
  t.equal(numberToHalf(65519), 0x7bff, 'below the halfway point stays finite');
  t.equal(numberToHalf(65520), 0x7c00, 'halfway to 65536 rounds to infinity');
  t.equal(numberToHalf(2049), 0x6800, '2049 ties to even (2048)');
  t.equal(numberToHalf(2051), 0x6802, '2051 ties to even (2052)');
  t.equal(numberToHalf(2 ** -24), 0x0001, 'smallest subnormal');
  t.equal(numberToHalf(2 ** -25), 0x0000, 'half of it ties to even (zero)');
  const d = Uint16Array.from([1, 2, -3, 1000, 2048].map(numberToHalf));
  reduceHalf('sum', d, Uint16Array.from([1, 5, -4, 24, 1].map(numberToHalf)));
  t.same(Array.from(d).map(halfToNumber), [2, 7, -7, 1024, 2048]);
  const m = Uint16Array.from([1, -2, 3].map(numberToHalf));
  reduceHalf('max', m, Uint16Array.from([0, -1, 4].map(numberToHalf)));
  t.same(Array.from(m).map(halfToNumber), [1, -1, 4]);
  reduceHalf('min', m, Uint16Array.from([0, -9, 4].map(numberToHalf)));
  t.same(Array.from(m).map(halfToNumber), [0, -9, 4]);
});

t.test('kernel memory: aligned regions, reuse after free, growth keeps old views valid', async (t) => {
  const memory = new KernelMemory();
  const a = memory.alloc(10);
  const view = new Uint8Array(memory.buffer, a.offset, 10);
  view.fill(7);
  const big = memory.alloc(8 * 1024 * 1024); // forces growth
  t.equal(a.offset % 64, 0);
  t.equal(big.offset % 64, 0);
  t.ok(memory.owns(view.buffer), 'old buffer object is still ours');
  t.equal(new Uint8Array(memory.buffer, a.offset, 10)[9], 7, 'data survives growth');
  memory.free(big);
  const again = memory.alloc(1024);
  t.equal(again.offset, big.offset, 'freed space is reused');
  t.notOk(memory.owns(new ArrayBuffer(8)));
});

t.test('float16 fast rounding equals the exact reference for sums of two halves', async (t) => {
  let bad = 0;
  let checked = 0;
  let seed = 12345;
  const rand = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed >>> 16;
  };
  const special = [0, 0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x3c01, 0x7bff, 0xfbff, 0x6800, 0x1400, 0x0200];
  const pairs: [number, number][] = [];
  for (const a of special) for (const b of special) pairs.push([a, b]);
  for (let i = 0; i < 200_000; i++) pairs.push([rand(), rand()]);
  for (let a = 0; a < 65536; a += 97) for (let b = 0; b < 65536; b += 89) pairs.push([a, b]);
  for (const [a, b] of pairs) {
    const x = halfToNumber(a),
      y = halfToNumber(b);
    if (Number.isNaN(x) || Number.isNaN(y)) continue;
    checked++;
    if (float32ToHalf(x + y) !== numberToHalf(x + y)) bad++;
  }
  t.equal(bad, 0, `${checked} sums agree`);
  t.equal(float32ToHalf(NaN) & 0x7e00, 0x7e00, 'NaN stays NaN');
  t.equal(float32ToHalf(-Infinity), 0xfc00);
});
