import t from 'tap';
import { ValidationError } from '../../src/protocols/errors.js';
import { decodeRingFrame, encodeRingFrame, FRAME_BYTES, type RingFrame } from '../../src/protocols/ring-frames.js';

t.test('frames round-trip', async (t) => {
  const frames: RingFrame[] = [
    { kind: 'hello', role: 'right', ringId: 7, rank: 2, worldSize: 4, connection: 1 },
    { kind: 'ack', role: 'left', ringId: 0xffffffff, rank: 0, worldSize: 1, connection: 0 },
    { kind: 'op', op: 'allReduce', dtype: 3, param: -1, seq: 12, bytes: 2 ** 40 },
    { kind: 'op', op: 'sendRecv', dtype: 1, param: 1, seq: 0, bytes: 0 },
    { kind: 'abort', culprit: 3, reporter: 1, reason: 'timeout' },
  ];
  for (const frame of frames) t.same(decodeRingFrame(encodeRingFrame(frame)), frame);
});

t.test('hostile input is refused with ValidationError, never a crash', async (t) => {
  const good = encodeRingFrame({ kind: 'hello', role: 'right', ringId: 0, rank: 1, worldSize: 2, connection: 0 });
  const mutate = (at: number, value: number) => {
    const copy = good.slice();
    copy[at] = value;
    return copy;
  };
  const hostile: unknown[] = [
    null,
    'hello',
    {},
    new Uint8Array(0),
    new Uint8Array(FRAME_BYTES),
    good.subarray(0, 31),
    new Uint8Array(33),
    mutate(0, 0),
    mutate(4, 9),
    mutate(6, 9),
    mutate(7, 0),
    mutate(12, 5),
    mutate(16, 0),
    mutate(20, 255),
    mutate(21, 1),
  ];
  const op = encodeRingFrame({ kind: 'op', op: 'broadcast', dtype: 1, param: 0, seq: 0, bytes: 8 });
  const opBad = op.slice();
  opBad[7] = 99;
  hostile.push(opBad);
  const opNeg = op.slice();
  new DataView(opNeg.buffer).setFloat64(24, -1, true);
  hostile.push(opNeg);
  const opNaN = op.slice();
  new DataView(opNaN.buffer).setFloat64(24, NaN, true);
  hostile.push(opNaN);
  for (const [i, input] of hostile.entries()) t.throws(() => decodeRingFrame(input), ValidationError, `input ${i}`);
  for (let i = 0; i < 2000; i++) {
    const random = Uint8Array.from({ length: FRAME_BYTES }, (_, j) =>
      j < 4 ? (good[j] as number) : (i * 31 + j * 17) & 255,
    );
    try {
      decodeRingFrame(random);
    } catch (error) {
      if (!(error instanceof ValidationError)) t.fail(`non-validation error: ${String(error)}`);
    }
  }
});
