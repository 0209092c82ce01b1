/**
 * Pure layout arithmetic shared by every rank: all ranks must derive the same lanes, segments and
 * chunks from the same (size, n, options), because the wire carries no per-chunk framing.
 */
export interface Span {
  readonly start: number;
  readonly count: number;
}

export const mod = (x: number, n: number): number => ((x % n) + n) % n;

/** `count` items from `start` split into `parts` contiguous spans, sizes differing by at most one. */
export function splitEven(start: number, count: number, parts: number): Span[] {
  const spans: Span[] = [];
  const base = Math.floor(count / parts);
  const extra = count % parts;
  let at = start;
  for (let i = 0; i < parts; i++) {
    const size = base + (i < extra ? 1 : 0);
    spans.push({ start: at, count: size });
    at += size;
  }
  return spans;
}

/** The n ring segments of a span: ceil(count/n) each, so trailing segments may be short or empty (MLX's split). */
export function segmentsOf(span: Span, n: number): Span[] {
  const size = Math.ceil(span.count / n);
  const segments: Span[] = [];
  for (let s = 0; s < n; s++) {
    const from = Math.min(span.count, s * size);
    const to = Math.min(span.count, (s + 1) * size);
    segments.push({ start: span.start + from, count: to - from });
  }
  return segments;
}

/** A span cut into pipeline chunks of at most `chunk` items (none for an empty span). */
export function chunksOf(span: Span, chunk: number): Span[] {
  const chunks: Span[] = [];
  for (let at = 0; at < span.count; at += chunk)
    chunks.push({ start: span.start + at, count: Math.min(chunk, span.count - at) });
  return chunks;
}

export interface LanePlan {
  /** Connection index to the neighbour (0 … connections-1). */
  readonly connection: number;
  /** +1: send to the right neighbour, receive from the left; -1: the reverse. */
  readonly dir: 1 | -1;
}

/**
 * How many lanes (independent rings) to run: up to 2 per connection when both directions are used,
 * but only while each rank's share per lane stays above `minLaneBytes` (tiny lanes cost a header each).
 */
export function planLanes(
  bytes: number,
  n: number,
  connections: number,
  bidirectional: boolean,
  minLaneBytes: number,
): LanePlan[] {
  const available = bidirectional ? 2 * connections : connections;
  const wanted = Math.max(1, Math.min(available, Math.floor(bytes / Math.max(1, n * minLaneBytes))));
  const lanes: LanePlan[] = [];
  for (let lane = 0; lane < wanted; lane++) {
    lanes.push(bidirectional ? { connection: lane >> 1, dir: lane % 2 === 0 ? 1 : -1 } : { connection: lane, dir: 1 });
  }
  return lanes;
}

/**
 * Pipeline chunk for one segment: about an eighth of it, so a hop still overlaps ≥ 8 chunks, but never
 * below `minBytes` nor above `maxBytes`. Bigger chunks mean fewer writes, reads, completion callbacks
 * and kernel calls per byte — on unshaped links the ring is CPU-bound and that overhead is the part of
 * the cost torus controls (docs/ring.md). A pure function of sizes, so every rank derives the same.
 */
export function chunkBytesFor(segmentBytes: number, minBytes: number, maxBytes: number): number {
  return Math.max(minBytes, Math.min(Math.max(minBytes, maxBytes), Math.ceil(segmentBytes / 8)));
}

/**
 * Whether to run both ring directions at once. With two ranks a one-direction ring already carries
 * data both ways over the single link (rank 0 → 1 and 1 → 0), so a second direction only adds sockets
 * and per-chunk overhead on the same link.
 */
export function useBothDirections(bidirectional: boolean, n: number): boolean {
  return bidirectional && n > 2;
}

/** Elements per pipeline chunk for an element size and a byte budget (at least one element). */
export function chunkElements(chunkBytes: number, elementBytes: number): number {
  return Math.max(1, Math.floor(chunkBytes / elementBytes));
}
