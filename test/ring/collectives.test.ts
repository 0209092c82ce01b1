/** Correctness of every collective on 2–5 ranks over loopback, bit-exact, in one process. */
import t, { type Test } from 'tap';
import type { RingCommunicator } from '../../src/ring/index.js';
import type { Dtype, ReduceOp, RingArray } from '../../src/ring/index.js';
import { bitsEqual, exactInput, firstDifference, loopbackRing } from './fixtures/helpers.js';
import { referenceAllGather, referenceAllReduce, tcpHandles, tcpHandlesSettled } from './fixtures/reference.js';

const DTYPES: Dtype[] = ['float32', 'int32', 'float16'];
const OPS: ReduceOp[] = ['sum', 'max', 'min'];

function sizesFor(n: number, big: boolean): number[] {
  // 1, n−1, not divisible by n, odd element (and for float16 odd 2-byte) counts, around the
  // latency-path threshold (32 KiB of float32), and above 1 MiB.
  const sizes = [1, n - 1, 7, 4097, 8193];
  if (big) sizes.push(262_145);
  return [...new Set(sizes.filter((s) => s > 0))];
}

async function checkRing(t: Test, comms: RingCommunicator[], big: boolean): Promise<void> {
  const n = comms.length;
  let seed = 0;
  for (const dtype of DTYPES) {
    for (const count of sizesFor(n, big)) {
      const where = `${dtype} × ${count}`;
      for (const op of OPS) {
        seed++;
        const inputs = comms.map((c) => exactInput(dtype, count, c.rank, seed));
        const expected = referenceAllReduce(inputs, op);
        const outs = await Promise.all(comms.map((c, r) => c.allReduce((inputs[r] as RingArray).slice(), op)));
        const bad = outs
          .map((o, r) => (bitsEqual(o, expected) ? null : `rank ${r}: ${firstDifference(o, expected)}`))
          .filter(Boolean);
        t.same(bad, [], `allReduce ${op} ${where}`);
      }
      seed++;
      const inputs = comms.map((c) => exactInput(dtype, count, c.rank, seed));
      const gathered = await Promise.all(comms.map((c, r) => c.allGather(inputs[r] as RingArray)));
      const expectedGather = referenceAllGather(inputs);
      t.ok(
        gathered.every((g) => bitsEqual(g, expectedGather)),
        `allGather ${where}`,
      );
      const root = count % n;
      const bufs = comms.map((_c, r) =>
        r === root ? (inputs[r] as RingArray).slice() : exactInput(dtype, count, r, seed + 1000),
      );
      await Promise.all(comms.map((c, r) => c.broadcast(bufs[r] as RingArray, root)));
      t.ok(
        bufs.every((b) => bitsEqual(b, inputs[root] as RingArray)),
        `broadcast root ${root} ${where}`,
      );
      for (const shift of [1, -1] as const) {
        const recvs = comms.map(() => (inputs[0] as RingArray).slice().fill(0));
        await Promise.all(comms.map((c, r) => c.sendRecv(inputs[r] as RingArray, recvs[r] as RingArray, shift)));
        t.ok(
          recvs.every((got, r) => bitsEqual(got, inputs[(r - shift + n) % n] as RingArray)),
          `sendRecv shift ${shift} ${where}`,
        );
      }
    }
  }
  // Point-to-point to the right neighbour, then an out-of-place all-reduce into kernel memory (zero-copy path).
  const count = 5000;
  const sends = comms.map((c) => exactInput('float32', count, c.rank, 99));
  const recvs = comms.map(() => new Float32Array(count));
  await Promise.all(
    comms.map(async (c, r) => {
      await c.send(sends[r] as RingArray, (r + 1) % n);
      await c.recv(recvs[r] as RingArray, (r - 1 + n) % n);
    }),
  );
  t.ok(
    recvs.every((got, r) => bitsEqual(got, sends[(r - 1 + n) % n] as RingArray)),
    'send/recv to neighbours',
  );
  const outs = comms.map((c) => c.alloc('float32', count));
  await Promise.all(comms.map((c, r) => c.allReduce(sends[r] as RingArray, 'sum', outs[r])));
  const expected = referenceAllReduce(sends, 'sum');
  t.ok(
    outs.every((o) => bitsEqual(o, expected)),
    'out-of-place all-reduce into comm.alloc() memory',
  );
  t.ok(
    sends.every((s, r) => bitsEqual(s, exactInput('float32', count, r, 99))),
    'input untouched by out-of-place all-reduce',
  );
  await Promise.all(comms.map((c) => c.barrier()));
  t.pass('barrier');
}

for (const n of [2, 3, 4, 5]) {
  t.test(`${n} ranks, default options`, async (t) => {
    const before = tcpHandles();
    const comms = await loopbackRing(n);
    t.teardown(() => Promise.all(comms.map((c) => c.close())));
    await checkRing(t, comms, n <= 3);
    await Promise.all(comms.map((c) => c.close()));
    t.equal(await tcpHandlesSettled(before), before, 'no sockets left after close');
  });
}

t.test('3 ranks, 2 connections per neighbour, tiny chunks, no latency path', async (t) => {
  const comms = await loopbackRing(3, {
    connections: 2,
    chunkBytes: 4096,
    maxChunkBytes: 8192,
    smallMessageBytes: 0,
    minLaneBytes: 64,
  });
  t.teardown(() => Promise.all(comms.map((c) => c.close())));
  await checkRing(t, comms, true);
});

t.test(
  '2 ranks, adaptive chunks between 64 B and 1000 B (not a multiple of the element size), no latency path',
  async (t) => {
    const comms = await loopbackRing(2, {
      chunkBytes: 64,
      maxChunkBytes: 1000,
      smallMessageBytes: 0,
      minLaneBytes: 64,
    });
    t.teardown(() => Promise.all(comms.map((c) => c.close())));
    await checkRing(t, comms, true);
  },
);

t.test('4 ranks, one direction, JS kernels', async (t) => {
  const comms = await loopbackRing(4, { bidirectional: false, kernel: 'js', chunkBytes: 16384 });
  t.teardown(() => Promise.all(comms.map((c) => c.close())));
  t.equal(comms[0]?.reducer.kind, 'js');
  await checkRing(t, comms, false);
});

t.test('1 rank: collectives are local', async (t) => {
  const [comm] = await loopbackRing(1);
  t.teardown(() => comm?.close());
  const a = Float32Array.from([1, 2, 3]);
  t.same(Array.from(await comm!.allReduce(a)), [1, 2, 3]);
  t.same(Array.from(await comm!.allGather(a)), [1, 2, 3]);
  await comm!.barrier();
});
