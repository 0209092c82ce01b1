/**
 * The ring schedules, written as dataflow over one lane: every receive is posted up front in stream
 * order, and each completed chunk immediately triggers the next send, so reduction of chunk p overlaps
 * the arrival of chunk p+1 and a chunk is forwarded as soon as it is ready (pipelining across hops).
 * The lane's direction `dir` decides who is "next": +1 sends right and receives from the left.
 */
import { chunksOf, mod, segmentsOf, type Span } from './layout.js';

export interface LaneIO {
  readonly dir: 1 | -1;
  send(bytes: Uint8Array): void;
  expect(target: Uint8Array, onDone: () => void): void;
}

/** Byte view of an element span. */
export type SpanBytes = (span: Span) => Uint8Array;

/**
 * Ring all-reduce on one lane's span: n−1 reduce-scatter steps (receive into `staging`, reduce into the
 * data, send on) then n−1 all-gather steps (receive in place, forward). Segment s = r − dir·(k+1) is
 * received at reduce-scatter step k; after step n−2 this rank owns segment r + dir fully reduced.
 */
export function ringAllReduce(
  io: LaneIO,
  p: {
    rank: number;
    n: number;
    span: Span;
    chunk: number;
    bytes: SpanBytes;
    staging: Uint8Array;
    reduceInto: (dst: Uint8Array, src: Uint8Array) => void;
  },
): void {
  const { rank, n, chunk } = p;
  const segments = segmentsOf(p.span, n);
  const segment = (s: number) => segments[mod(s, n)] as Span;
  // Own segment leaves in one write: it is all ready, and one big write costs fewer calls than chunks.
  const own = segment(rank);
  if (own.count > 0) io.send(p.bytes(own));
  for (let k = 0; k < n - 1; k++) {
    for (const c of chunksOf(segment(rank - io.dir * (k + 1)), chunk)) {
      const dst = p.bytes(c);
      const src = p.staging.subarray(0, dst.length);
      // The last reduce-scatter step completes a segment; sending it is all-gather step 0.
      io.expect(src, () => {
        p.reduceInto(dst, src);
        io.send(dst);
      });
    }
  }
  for (let k = 0; k < n - 1; k++) {
    for (const c of chunksOf(segment(rank - io.dir * k), chunk)) {
      const dst = p.bytes(c);
      io.expect(dst, k < n - 2 ? () => io.send(dst) : noop);
    }
  }
}

/**
 * Ring all-gather over `hops` steps: send own block, then receive block r − dir·(k+1) at step k and
 * forward it (except at the last step). hops = n−1 gathers everything; fewer hops on each of the
 * two directions is the small-message path (each side fetches half of the ring).
 */
export function ringGather(
  io: LaneIO,
  p: { rank: number; n: number; hops: number; chunk: number; block: (rank: number) => Uint8Array },
): void {
  if (p.hops <= 0) return;
  io.send(p.block(p.rank));
  for (let k = 0; k < p.hops; k++) {
    const block = p.block(mod(p.rank - io.dir * (k + 1), p.n));
    for (let at = 0; at < block.length; at += p.chunk) {
      const part = block.subarray(at, Math.min(block.length, at + p.chunk));
      io.expect(part, k < p.hops - 1 ? () => io.send(part) : noop);
    }
  }
}

/** Which ranks of a chain broadcast send and receive: position along `dir` from the root. */
export function chainRole(
  rank: number,
  n: number,
  root: number,
  dir: 1 | -1,
  hops: number,
): { receives: boolean; sends: boolean } {
  const position = mod(dir * (rank - root), n);
  return { receives: position >= 1 && position <= hops, sends: position < hops };
}

/** Pipelined chain from the root along `dir` over `hops` ranks. */
export function chainBroadcast(
  io: LaneIO,
  p: { rank: number; n: number; root: number; hops: number; chunk: number; data: Uint8Array },
): void {
  const role = chainRole(p.rank, p.n, p.root, io.dir, p.hops);
  if (!role.receives) {
    if (role.sends) io.send(p.data);
    return;
  }
  for (let at = 0; at < p.data.length; at += p.chunk) {
    const part = p.data.subarray(at, Math.min(p.data.length, at + p.chunk));
    io.expect(part, role.sends ? () => io.send(part) : noop);
  }
}

function noop(): void {}
