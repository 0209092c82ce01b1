/**
 * The mailbox codec over a MessagePort (or a Worker / parentPort).
 *
 * - Each frame is msgpack-encoded when it is sent (so an unencodable body fails its sender, not a later batch),
 *   with msgpackr's sequential records: an object shape is described once per port, then sent as values only.
 * - Frames sent in one tick leave in one post (at most MAX_BATCH_FRAMES, so a burst overlaps the two threads).
 * - A post starts with a 4-byte sequence number: the receiver decodes only the next post of its paired sender,
 *   so a foreign or replayed post is rejected before it can touch the record definitions both ends share.
 * - Small posts travel as a one-byte string, large ones as a transferred buffer; large typed arrays in a body
 *   move out of band (out-of-band.ts). All measured in benchmarks/mailbox.
 */
import { Packr, RESERVE_START_SPACE } from 'msgpackr';
import { ClosedResourceError, ValidationError } from '../protocols/errors.js';
import { decodeFrame, MAX_FRAME_BYTES, type Frame } from '../protocols/mailbox.js';
import { extractOutOfBand, restoreOutOfBand } from './out-of-band.js';

export interface PostTarget {
  postMessage(value: unknown, transferList?: readonly ArrayBuffer[]): void;
  on(event: 'message', listener: (value: unknown) => void): unknown;
  off(event: 'message', listener: (value: unknown) => void): unknown;
}

/**
 * A batch leaves once it holds this many frames, without waiting for the end of the tick: the receiver starts
 * decoding while the sender still encodes (the two threads overlap), and neither side holds a huge batch.
 */
const MAX_BATCH_FRAMES = 256;
/** ... or this many bytes, so a burst of large frames never builds a post near the receiver's size limit. */
const MAX_BATCH_BYTES = 1024 * 1024;
/**
 * Posts below this size travel as a one-byte string. Measured: for small posts a fresh transferable ArrayBuffer
 * costs more than its bytes (malloc, backing-store bookkeeping on both threads, a free later), while a string
 * lives on the V8 heap and is cloned with one memcpy. Larger posts are copied once into a buffer and transferred.
 */
const SMALL_POST_BYTES = 16 * 1024;
const HEADER_BYTES = 4;
const RESOLVED = Promise.resolve();

/** Each packed frame starts with HEADER_BYTES of room, where the first frame of a post gets the sequence number. */
const PACK_WITH_HEADER_ROOM = RESERVE_START_SPACE | HEADER_BYTES;
// copyBuffers: received bytes may sit in a reused buffer (see #receive), so decoded binaries must not point into it.
const newPackr = (): Packr => new Packr({ sequential: true, moreTypes: true, copyBuffers: true });

type Latin1Buffer = Buffer & {
  latin1Slice(start: number, end: number): string;
  latin1Write(text: string, offset: number, length: number): number;
};
/** Bytes as a one-byte string (one memcpy, no per-character work). */
const latin1 = (bytes: Buffer, start: number): string => (bytes as Latin1Buffer).latin1Slice(start, bytes.length);

function writeSeq(bytes: Uint8Array, seq: number): void {
  bytes[0] = seq & 0xff;
  bytes[1] = (seq >>> 8) & 0xff;
  bytes[2] = (seq >>> 16) & 0xff;
  bytes[3] = seq >>> 24;
}

export interface FramePortHandlers {
  onFrame(frame: Frame): void;
  /** A post or frame failed validation; the port stays open. */
  onReject(error: ValidationError): void;
}

export class FramePort {
  readonly #target: PostTarget;
  readonly #handlers: FramePortHandlers;
  #packer = newPackr();
  readonly #unpacker = newPackr();
  /** Encoded frames waiting for the flush (views on msgpackr's output buffer, which it never rewinds). */
  readonly #chunks: Buffer[] = [];
  #queuedBytes = 0;
  #transfers: ArrayBuffer[] = [];
  #sentPosts = 0;
  #receivedPosts = 0;
  /** Small posts are decoded from this reused buffer rather than a fresh allocation each. */
  readonly #rx = Buffer.allocUnsafe(SMALL_POST_BYTES);
  #flushScheduled = false;
  #closed = false;
  readonly #listener = (value: unknown): void => this.#receive(value);
  readonly #flushTask = (): void => this.flush();

  constructor(
    target: PostTarget,
    handlers: FramePortHandlers,
    readonly label: string,
    readonly maxPostBytes = MAX_FRAME_BYTES,
  ) {
    this.#target = target;
    this.#handlers = handlers;
    target.on('message', this.#listener);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Encodes and queues a frame; frames queued in one tick leave in one post. Throws ClosedResourceError once
   * closed, ValidationError when the frame cannot be encoded (nothing is queued then).
   */
  send(frame: Frame): void {
    if (this.#closed) throw new ClosedResourceError(this.label);
    const transfersBefore = this.#transfers.length;
    let bytes: Buffer;
    try {
      const encoded = frame.t === 'msg' || frame.t === 'reply' ? extractOutOfBand(frame, this.#transfers, 3) : frame;
      bytes = this.#packer.pack(encoded, PACK_WITH_HEADER_ROOM);
    } catch (error) {
      this.#transfers.length = transfersBefore;
      // A failed pack may leave record definitions the receiver never sees: start a fresh packer, whose records
      // are all defined again inline, in order, before their first use.
      this.#packer = newPackr();
      throw new ValidationError('frame', 'body', `cannot encode ${frame.t} frame: ${(error as Error).message}`);
    }
    this.#chunks.push(bytes);
    this.#queuedBytes += bytes.length - HEADER_BYTES;
    if (this.#chunks.length >= MAX_BATCH_FRAMES || this.#queuedBytes >= MAX_BATCH_BYTES) {
      this.flush();
      return;
    }
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      // A resolved promise, not queueMicrotask: Node wraps each queueMicrotask callback in an AsyncResource.
      void RESOLVED.then(this.#flushTask);
    }
  }

  flush(): void {
    this.#flushScheduled = false;
    if (this.#chunks.length === 0 || this.#closed) return;
    // The chunk list is consumed here, synchronously, so it is reused; a transfer list leaves with the post.
    const chunks = this.#chunks;
    const transfers = this.#transfers;
    const size = HEADER_BYTES + this.#queuedBytes;
    if (transfers.length > 0) this.#transfers = [];
    this.#queuedBytes = 0;
    const seq = (this.#sentPosts + 1) >>> 0;
    writeSeq(chunks[0]!, seq); // the first frame's header room; the others' is skipped below
    if (transfers.length === 0 && size < SMALL_POST_BYTES) {
      let text = latin1(chunks[0]!, 0);
      for (let i = 1; i < chunks.length; i++) text += latin1(chunks[i]!, HEADER_BYTES);
      chunks.length = 0;
      this.#target.postMessage(text);
    } else {
      const bytes = new Uint8Array(size);
      bytes.set(chunks[0]!, 0);
      let offset = chunks[0]!.length;
      for (let i = 1; i < chunks.length; i++) {
        bytes.set(chunks[i]!.subarray(HEADER_BYTES), offset);
        offset += chunks[i]!.length - HEADER_BYTES;
      }
      chunks.length = 0;
      this.#target.postMessage(transfers.length === 0 ? bytes : [bytes, ...transfers], [bytes.buffer, ...transfers]);
    }
    this.#sentPosts = seq;
  }

  close(): void {
    if (this.#closed) return;
    this.flush();
    this.#closed = true;
    this.#target.off('message', this.#listener);
  }

  #reject(path: string, reason: string): void {
    this.#handlers.onReject(new ValidationError('frame', path, reason));
  }

  #receive(value: unknown): void {
    let bytes: Uint8Array;
    let buffers: readonly unknown[] = [];
    if (typeof value === 'string') {
      if (value.length > this.maxPostBytes)
        return this.#reject('', `post of ${value.length} bytes exceeds the ${this.maxPostBytes}-byte limit`);
      if (value.length <= this.#rx.length) {
        (this.#rx as Latin1Buffer).latin1Write(value, 0, value.length);
        bytes = this.#rx.subarray(0, value.length);
      } else {
        bytes = Buffer.from(value, 'latin1'); // not our sender's (it posts large batches as buffers): not kept
      }
    } else if (value instanceof Uint8Array) {
      bytes = value;
    } else if (Array.isArray(value) && value[0] instanceof Uint8Array) {
      bytes = value[0];
      buffers = value.slice(1);
    } else {
      return this.#reject('', 'expected msgpack bytes');
    }
    if (bytes.byteLength > this.maxPostBytes)
      return this.#reject('', `post of ${bytes.byteLength} bytes exceeds the ${this.maxPostBytes}-byte limit`);
    if (bytes.byteLength <= HEADER_BYTES) return this.#reject('', 'post too short for a header and a frame');
    const seq = (bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16) | (bytes[3]! << 24)) >>> 0;
    const expected = (this.#receivedPosts + 1) >>> 0;
    if (seq !== expected)
      return this.#reject('', `post ${seq} out of sequence (expected ${expected}): not from this port's sender`);
    this.#receivedPosts = seq;
    let decoded: unknown[];
    try {
      decoded = this.#unpacker.unpackMultiple(bytes.subarray(HEADER_BYTES)) as unknown[];
    } catch (error) {
      return this.#reject('', `undecodable msgpack: ${(error as Error).message}`);
    }
    for (let i = 0; i < decoded.length; i++) {
      let frame: Frame;
      try {
        frame = decodeFrame(buffers.length > 0 ? restoreOutOfBand(decoded[i], buffers, 4) : decoded[i], `frame[${i}]`);
      } catch (error) {
        this.#handlers.onReject(
          error instanceof ValidationError ? error : new ValidationError('frame', `frame[${i}]`, String(error)),
        );
        continue;
      }
      this.#handlers.onFrame(frame);
    }
  }
}
