/**
 * The collectives, in terms of the communicator's lanes. Choice of path is a pure function of sizes
 * and options, so every rank makes the same one (the wire has no per-chunk framing).
 */
import { TorusError, ValidationError } from '../protocols/errors.js';
import {
  DTYPE_BYTES,
  DTYPE_CODE,
  REDUCE_OP_CODE,
  dtypeOf,
  isReduceOp,
  type ReduceOp,
  type RingArray,
} from '../native/kernels/index.js';
import { chainBroadcast, chainRole, ringAllReduce, ringGather } from './algorithms.js';
import type { LaneHeader, RingContext } from './context.js';
import {
  chunkBytesFor,
  chunkElements,
  mod,
  planLanes,
  splitEven,
  useBothDirections,
  type LanePlan,
  type Span,
} from './layout.js';

const bytesOf = (a: RingArray): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** The two half-rings of the latency path: each direction covers half of the other ranks. */
function halfRings(n: number, bidirectional: boolean): { plan: LanePlan; hops: number }[] {
  if (!bidirectional) return [{ plan: { connection: 0, dir: 1 }, hops: n - 1 }];
  return [
    { plan: { connection: 0, dir: 1 }, hops: Math.ceil((n - 1) / 2) },
    { plan: { connection: 0, dir: -1 }, hops: Math.floor((n - 1) / 2) },
  ];
}

function sameShape(a: RingArray, b: RingArray, what: string): void {
  if (dtypeOf(a) !== dtypeOf(b) || a.length !== b.length)
    throw new ValidationError('params', what, 'input and output must have the same type and length');
}

export async function allReduce(
  ctx: RingContext,
  input: RingArray,
  op: ReduceOp,
  output: RingArray,
): Promise<RingArray> {
  if (!isReduceOp(op)) throw new ValidationError('params', 'op', `unknown reduce op ${String(op)}`);
  sameShape(input, output, 'output');
  const dtype = dtypeOf(input);
  const elem = DTYPE_BYTES[dtype];
  const count = input.length;
  const bytes = count * elem;
  if (ctx.n === 1 || count === 0) {
    if (output !== input) output.set(input as never);
    return output;
  }
  const inPlace = ctx.memory.owns(output.buffer);
  const workOffset = inPlace ? output.byteOffset : ctx.scratch('work', bytes).offset;
  const work = new Uint8Array(ctx.memory.buffer, workOffset, bytes);
  if (!(inPlace && input === output)) work.set(bytesOf(input));
  const header: LaneHeader = { op: 'allReduce', dtype: DTYPE_CODE[dtype], param: REDUCE_OP_CODE[op], bytes };
  const reduce = (dst: number, src: number, elements: number) => ctx.reducer.reduce(op, dtype, dst, src, elements);
  const run = ctx.begin(`allReduce(${count} × ${dtype}, ${op})`);
  if (bytes <= ctx.options.smallMessageBytes) {
    // Latency path: gather every rank's whole buffer over the two half-rings (⌈(n−1)/2⌉ hops instead
    // of 2(n−1)), then reduce in rank order so every rank computes identical bits.
    const scratch = ctx.scratch('gather', ctx.n * bytes);
    const block = (r: number) => new Uint8Array(ctx.memory.buffer, scratch.offset + r * bytes, bytes);
    block(ctx.rank).set(work);
    for (const { plan, hops } of halfRings(ctx.n, ctx.options.bidirectional)) {
      if (hops > 0)
        ringGather(ctx.lane(run, plan, header, true, true), {
          rank: ctx.rank,
          n: ctx.n,
          hops,
          chunk: ctx.options.chunkBytes,
          block,
        });
    }
    await ctx.finish(run);
    work.set(block(0));
    for (let r = 1; r < ctx.n; r++) reduce(workOffset, scratch.offset + r * bytes, count);
  } else {
    const lanes = planLanes(
      bytes,
      ctx.n,
      ctx.options.connections,
      useBothDirections(ctx.options.bidirectional, ctx.n),
      ctx.options.minLaneBytes,
    );
    const spans = splitEven(0, count, lanes.length);
    const segmentBytes = Math.ceil(count / lanes.length / ctx.n) * elem;
    const chunk = chunkElements(chunkBytesFor(segmentBytes, ctx.options.chunkBytes, ctx.options.maxChunkBytes), elem);
    const spanBytes = (s: Span) => work.subarray(s.start * elem, (s.start + s.count) * elem);
    lanes.forEach((plan, i) => {
      const span = spans[i] as Span;
      if (span.count === 0) return;
      const staging = ctx.scratch(`staging${i}`, chunk * elem);
      ringAllReduce(ctx.lane(run, plan, header, true, true), {
        rank: ctx.rank,
        n: ctx.n,
        span,
        chunk,
        bytes: spanBytes,
        staging: new Uint8Array(ctx.memory.buffer, staging.offset, chunk * elem),
        reduceInto: (dst, src) => reduce(dst.byteOffset, src.byteOffset, dst.length / elem),
      });
    });
    await ctx.finish(run);
  }
  if (!inPlace) bytesOf(output).set(work);
  return output;
}

export async function allGather(ctx: RingContext, input: RingArray, output: RingArray): Promise<RingArray> {
  const dtype = dtypeOf(input);
  if (dtypeOf(output) !== dtype || output.length !== input.length * ctx.n)
    throw new ValidationError('params', 'output', `must be a ${dtype} array of ${input.length * ctx.n} elements`);
  const elem = DTYPE_BYTES[dtype];
  const bytes = input.byteLength;
  const out = bytesOf(output);
  const block = (r: number) => out.subarray(r * bytes, (r + 1) * bytes);
  const own = block(ctx.rank);
  if (!(input.buffer === output.buffer && input.byteOffset === own.byteOffset)) own.set(bytesOf(input));
  if (ctx.n === 1 || bytes === 0) return output;
  const header: LaneHeader = { op: 'allGather', dtype: DTYPE_CODE[dtype], param: 0, bytes };
  const run = ctx.begin(`allGather(${input.length} × ${dtype})`);
  const chunk = ctx.options.chunkBytes;
  if (bytes <= ctx.options.smallMessageBytes) {
    for (const { plan, hops } of halfRings(ctx.n, ctx.options.bidirectional)) {
      if (hops > 0)
        ringGather(ctx.lane(run, plan, header, true, true), { rank: ctx.rank, n: ctx.n, hops, chunk, block });
    }
  } else {
    const lanes = planLanes(
      bytes * ctx.n,
      ctx.n,
      ctx.options.connections,
      useBothDirections(ctx.options.bidirectional, ctx.n),
      ctx.options.minLaneBytes,
    );
    const spans = splitEven(0, input.length, lanes.length);
    lanes.forEach((plan, i) => {
      const span = spans[i] as Span;
      if (span.count === 0) return;
      const slice = (r: number) => block(r).subarray(span.start * elem, (span.start + span.count) * elem);
      const sliceChunk = chunkBytesFor(span.count * elem, chunk, ctx.options.maxChunkBytes);
      ringGather(ctx.lane(run, plan, header, true, true), {
        rank: ctx.rank,
        n: ctx.n,
        hops: ctx.n - 1,
        chunk: sliceChunk,
        block: slice,
      });
    });
  }
  await ctx.finish(run);
  return output;
}

export async function broadcast(ctx: RingContext, buffer: RingArray, root: number): Promise<RingArray> {
  if (!Number.isInteger(root) || root < 0 || root >= ctx.n)
    throw new ValidationError('params', 'root', `must be a rank 0…${ctx.n - 1}`);
  const dtype = dtypeOf(buffer);
  const elem = DTYPE_BYTES[dtype];
  const bytes = buffer.byteLength;
  if (ctx.n === 1 || bytes === 0) return buffer;
  const data = bytesOf(buffer);
  const header: LaneHeader = { op: 'broadcast', dtype: DTYPE_CODE[dtype], param: root, bytes };
  const run = ctx.begin(`broadcast(${buffer.length} × ${dtype}, root ${root})`);
  const chain = (plan: LanePlan, hops: number, part: Uint8Array) => {
    const role = chainRole(ctx.rank, ctx.n, root, plan.dir, hops);
    if (!role.sends && !role.receives) return;
    const io = ctx.lane(run, plan, header, role.sends, role.receives);
    // A chain is a true pipeline: the last of `hops` ranks finishes (hops − 1) chunks after the data
    // left the root, so beyond one hop keep that tail within 1/16 of the part.
    const chunk =
      hops <= 1
        ? chunkBytesFor(part.length, ctx.options.chunkBytes, ctx.options.maxChunkBytes)
        : chunkBytesFor((part.length * 8) / (16 * (hops - 1)), ctx.options.chunkBytes, ctx.options.maxChunkBytes);
    chainBroadcast(io, { rank: ctx.rank, n: ctx.n, root, hops, chunk, data: part });
  };
  if (bytes <= ctx.options.smallMessageBytes) {
    for (const { plan, hops } of halfRings(ctx.n, ctx.options.bidirectional)) if (hops > 0) chain(plan, hops, data);
  } else {
    // Bandwidth path: each lane carries a slice of the buffer around the whole ring (half each way).
    const lanes = planLanes(
      bytes,
      1,
      ctx.options.connections,
      useBothDirections(ctx.options.bidirectional, ctx.n),
      ctx.options.minLaneBytes,
    );
    const spans = splitEven(0, buffer.length, lanes.length);
    lanes.forEach((plan, i) => {
      const span = spans[i] as Span;
      if (span.count > 0) chain(plan, ctx.n - 1, data.subarray(span.start * elem, (span.start + span.count) * elem));
    });
  }
  await ctx.finish(run);
  return buffer;
}

export async function sendRecv(ctx: RingContext, send: RingArray, recv: RingArray, shift: 1 | -1): Promise<RingArray> {
  sameShape(send, recv, 'recv');
  if (shift !== 1 && shift !== -1) throw new ValidationError('params', 'shift', 'must be 1 or -1');
  if (ctx.n === 1) {
    recv.set(send as never);
    return recv;
  }
  let source = bytesOf(send);
  if (send.buffer === recv.buffer) source = source.slice(); // a receive must not overwrite bytes still being sent
  const header: LaneHeader = { op: 'sendRecv', dtype: DTYPE_CODE[dtypeOf(send)], param: shift, bytes: send.byteLength };
  const run = ctx.begin(`sendRecv(${send.length} × ${dtypeOf(send)}, shift ${shift})`);
  stripe(ctx, send, (c, from, to) => {
    const writer = ctx.link(shift === 1 ? 'writeRight' : 'writeLeft', c);
    const reader = ctx.link(shift === 1 ? 'readLeft' : 'readRight', c);
    ctx.openWrite(run, writer, header);
    ctx.write(run, writer, source.subarray(from, to));
    ctx.openRead(run, reader, header);
    run.expect(reader, bytesOf(recv).subarray(from, to), () => undefined);
  });
  await ctx.finish(run);
  return recv;
}

function neighbour(ctx: RingContext, peer: number): 'left' | 'right' {
  const right = mod(ctx.rank + 1, ctx.n);
  const left = mod(ctx.rank - 1, ctx.n);
  if (ctx.n < 2 || (peer !== left && peer !== right))
    throw new TorusError(
      'TORUS_API_VALIDATION',
      `rank ${ctx.rank} can only exchange point-to-point with its neighbours ${left} and ${right}, not ${peer}`,
      { peer },
    );
  return peer === right ? 'right' : 'left';
}

export async function sendTo(ctx: RingContext, buffer: RingArray, peer: number): Promise<void> {
  const side = neighbour(ctx, peer); // with two ranks, sends go right and receives come from the left
  const header: LaneHeader = { op: 'sendRecv', dtype: DTYPE_CODE[dtypeOf(buffer)], param: 0, bytes: buffer.byteLength };
  const run = ctx.begin(`send(${buffer.length} × ${dtypeOf(buffer)} → rank ${peer})`);
  stripe(ctx, buffer, (c, from, to) => {
    const writer = ctx.link(side === 'right' ? 'writeRight' : 'writeLeft', c);
    ctx.openWrite(run, writer, header);
    ctx.write(run, writer, bytesOf(buffer).subarray(from, to));
  });
  await ctx.finish(run);
}

export async function recvFrom(ctx: RingContext, buffer: RingArray, peer: number): Promise<RingArray> {
  const left = mod(ctx.rank - 1, ctx.n);
  neighbour(ctx, peer);
  const header: LaneHeader = { op: 'sendRecv', dtype: DTYPE_CODE[dtypeOf(buffer)], param: 0, bytes: buffer.byteLength };
  const run = ctx.begin(`recv(${buffer.length} × ${dtypeOf(buffer)} ← rank ${peer})`);
  stripe(ctx, buffer, (c, from, to) => {
    const reader = ctx.link(peer === left ? 'readLeft' : 'readRight', c);
    ctx.openRead(run, reader, header);
    run.expect(reader, bytesOf(buffer).subarray(from, to), () => undefined);
  });
  await ctx.finish(run);
  return buffer;
}

/** Splits a point-to-point buffer over the neighbour's connections (one per minLaneBytes, at least one). */
function stripe(
  ctx: RingContext,
  buffer: RingArray,
  each: (connection: number, from: number, to: number) => void,
): void {
  const elem = buffer.BYTES_PER_ELEMENT;
  const parts = Math.max(
    1,
    Math.min(ctx.options.connections, Math.floor(buffer.byteLength / ctx.options.minLaneBytes)),
  );
  splitEven(0, buffer.length, parts).forEach((span, c) => each(c, span.start * elem, (span.start + span.count) * elem));
}
