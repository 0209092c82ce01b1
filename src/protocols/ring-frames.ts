/**
 * Ring collective wire format. Fixed-size little-endian frames; payload bytes follow op headers
 * unframed (both sides derive every size from the op, like MLX's ring).
 *
 * Every TCP connection is used in one direction for data: the rank that dialed reads, the rank that
 * accepted writes (Node can read zero-copy into caller-chosen memory only on sockets it created).
 *
 *   hello (dialer → acceptor, 32 B): magic 'TRNG', version, kind=1, role (1 = you are my right
 *       neighbour, 2 = you are my left), ringId, rank, worldSize, connection index
 *   ack (acceptor → dialer, 32 B): kind=2, the acceptor's rank and worldSize, same ringId/connection
 *   op header (writer → reader, 32 B) before each collective's payload on a lane: kind=3, op, dtype,
 *       sequence number, lane payload bytes (float64), a parameter (root, reduce op)
 *   abort (dialer → acceptor, 32 B, on the otherwise idle reverse direction): kind=4, the rank that
 *       failed first (culprit), the reporting rank, a reason — so a failure is reported around the
 *       ring naming the rank that actually died, not the neighbour that gave up because of it
 */
import { ValidationError } from './errors.js';

export const RING_MAGIC = 0x474e5254; // 'TRNG' read as little-endian u32
export const RING_VERSION = 1;
export const FRAME_BYTES = 32;

export const RING_OPS = { allReduce: 1, allGather: 2, broadcast: 3, sendRecv: 4, barrier: 5 } as const;
export type RingOpName = keyof typeof RING_OPS;

export interface HelloFrame {
  readonly kind: 'hello' | 'ack';
  /** hello: which neighbour the dialer takes the acceptor to be. */
  readonly role: 'right' | 'left';
  readonly ringId: number;
  readonly rank: number;
  readonly worldSize: number;
  readonly connection: number;
}

export interface OpHeaderFrame {
  readonly kind: 'op';
  readonly op: RingOpName;
  readonly dtype: number;
  readonly param: number;
  readonly seq: number;
  readonly bytes: number;
}

export const ABORT_REASONS = ['lost', 'timeout', 'protocol', 'closed'] as const;
export type AbortReason = (typeof ABORT_REASONS)[number];

export interface AbortFrame {
  readonly kind: 'abort';
  readonly culprit: number;
  readonly reporter: number;
  readonly reason: AbortReason;
}

export type RingFrame = HelloFrame | OpHeaderFrame | AbortFrame;

const KIND = { hello: 1, ack: 2, op: 3, abort: 4 } as const;

export function encodeRingFrame(frame: RingFrame): Uint8Array {
  const out = new Uint8Array(FRAME_BYTES);
  const view = new DataView(out.buffer);
  view.setUint32(0, RING_MAGIC, true);
  view.setUint16(4, RING_VERSION, true);
  view.setUint8(6, KIND[frame.kind]);
  if (frame.kind === 'abort') {
    view.setUint8(7, ABORT_REASONS.indexOf(frame.reason) + 1);
    view.setUint32(8, frame.culprit, true);
    view.setUint32(12, frame.reporter, true);
  } else if (frame.kind === 'op') {
    view.setUint8(7, RING_OPS[frame.op]);
    view.setUint32(8, frame.dtype, true);
    view.setInt32(12, frame.param, true);
    view.setUint32(16, frame.seq >>> 0, true);
    view.setFloat64(24, frame.bytes, true);
  } else {
    view.setUint8(7, frame.role === 'right' ? 1 : 2);
    view.setUint32(8, frame.ringId >>> 0, true);
    view.setUint32(12, frame.rank, true);
    view.setUint32(16, frame.worldSize, true);
    view.setUint32(20, frame.connection, true);
  }
  return out;
}

/** Strict decoder: anything that is not exactly a valid frame throws ValidationError('frame', ...). */
export function decodeRingFrame(input: unknown): RingFrame {
  if (!(input instanceof Uint8Array)) throw new ValidationError('frame', '', 'ring frame must be bytes');
  if (input.byteLength !== FRAME_BYTES)
    throw new ValidationError('frame', '', `ring frame must be ${FRAME_BYTES} bytes, got ${input.byteLength}`);
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  if (view.getUint32(0, true) !== RING_MAGIC) throw new ValidationError('frame', 'magic', 'not a torus ring frame');
  const version = view.getUint16(4, true);
  if (version !== RING_VERSION)
    throw new ValidationError('frame', 'version', `unsupported ring protocol version ${version}`);
  const kind = view.getUint8(6);
  if (kind === KIND.op) {
    const code = view.getUint8(7);
    const op = (Object.keys(RING_OPS) as RingOpName[]).find((name) => RING_OPS[name] === code);
    if (!op) throw new ValidationError('frame', 'op', `unknown ring op ${code}`);
    const bytes = view.getFloat64(24, true);
    if (!Number.isSafeInteger(bytes) || bytes < 0)
      throw new ValidationError('frame', 'bytes', 'must be a non-negative integer');
    return {
      kind: 'op',
      op,
      dtype: view.getUint32(8, true),
      param: view.getInt32(12, true),
      seq: view.getUint32(16, true),
      bytes,
    };
  }
  if (kind === KIND.abort) {
    const reason = ABORT_REASONS[view.getUint8(7) - 1];
    if (!reason) throw new ValidationError('frame', 'reason', `unknown abort reason ${view.getUint8(7)}`);
    const culprit = view.getUint32(8, true);
    const reporter = view.getUint32(12, true);
    if (culprit > 65535 || reporter > 65535) throw new ValidationError('frame', 'culprit', 'rank out of range');
    return { kind: 'abort', culprit, reporter, reason };
  }
  if (kind !== KIND.hello && kind !== KIND.ack)
    throw new ValidationError('frame', 'kind', `unknown ring frame kind ${kind}`);
  const roleCode = view.getUint8(7);
  if (roleCode !== 1 && roleCode !== 2) throw new ValidationError('frame', 'role', `unknown role ${roleCode}`);
  const worldSize = view.getUint32(16, true);
  const rank = view.getUint32(12, true);
  if (worldSize < 1 || worldSize > 65536) throw new ValidationError('frame', 'worldSize', `out of range: ${worldSize}`);
  if (rank >= worldSize) throw new ValidationError('frame', 'rank', `${rank} not below worldSize ${worldSize}`);
  const connection = view.getUint32(20, true);
  if (connection > 63) throw new ValidationError('frame', 'connection', `out of range: ${connection}`);
  return {
    kind: kind === KIND.hello ? 'hello' : 'ack',
    role: roleCode === 1 ? 'right' : 'left',
    ringId: view.getUint32(8, true),
    rank,
    worldSize,
    connection,
  };
}
