/**
 * Length-prefixed msgpack framing for peer connections: `[u32 BE length][body]`. Once a connection is keyed the
 * body is `aes-256-gcm(msgpack) | 16-byte tag`, the nonce a per-direction counter that is never sent: a replayed,
 * reordered, dropped or altered frame fails to decrypt. `FrameDecoder` survives any byte stream: oversized
 * lengths, garbage msgpack, failed decryption and schema violations all end in one `{error}` result (the
 * connection is then closed with that reason); nothing throws past it. After the first error it stays failed.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { Packr, Unpackr } from 'msgpackr';
import { ValidationError } from '../../../protocols/errors.js';
import {
  decodePeerFrame,
  isHandshakeFrame,
  MAX_FRAME_BYTES,
  MAX_HANDSHAKE_BYTES,
  peekHello,
  PROTOCOL_VERSION,
  type PeerFrame,
} from '../../../protocols/peer-frames.js';

const packr = new Packr({ useRecords: false, moreTypes: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });

export const TAG_BYTES = 16;

/** One direction of a keyed connection: its AEAD key and the counter of the next frame. */
export interface CipherState {
  readonly key: Buffer;
  counter: bigint;
}

export function cipherState(key: Buffer): CipherState {
  return { key, counter: 0n };
}

function nonceOf(counter: bigint): Buffer {
  const iv = Buffer.alloc(12);
  iv.writeBigUInt64BE(counter, 4);
  return iv;
}

/** Encodes one frame; with `cipher` the body is sealed and the counter advanced. */
export function encodeFrame(frame: PeerFrame, cipher?: CipherState | null): Buffer {
  const payload = packr.pack(frame);
  const head = Buffer.alloc(4);
  if (!cipher) {
    head.writeUInt32BE(payload.length);
    // pack() reuses an internal scratch buffer: concat copies it before it leaves.
    return Buffer.concat([head, payload]);
  }
  head.writeUInt32BE(payload.length + TAG_BYTES);
  const aead = createCipheriv('aes-256-gcm', cipher.key, nonceOf(cipher.counter++));
  aead.setAAD(head);
  return Buffer.concat([head, aead.update(payload), aead.final(), aead.getAuthTag()]);
}

/** `incompatible` is set when the failure is a hello of another protocol version (listed, not just dropped). */
export type DecodeResult = {
  readonly frames: readonly PeerFrame[];
  readonly error?: string;
  readonly incompatible?: { v: number; nodeId?: string; cluster?: string };
};

export class FrameDecoder {
  /** Received bytes not yet consumed; the first chunk may be partly consumed (`#offset`). */
  #chunks: Buffer[] = [];
  #offset = 0;
  #buffered = 0;
  /** Length of the frame being assembled, once its 4-byte head has arrived. */
  #want = -1;
  #failed: string | null = null;
  #handshake = true;
  #cipher: CipherState | null = null;
  #pendingAfterHandshake = false;
  readonly #maxFrameBytes: number;

  constructor(options: { maxFrameBytes?: number } = {}) {
    this.#maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
  }

  get failed(): string | null {
    return this.#failed;
  }

  /** Leaves the handshake phase: bigger frames are allowed, and with a key every frame must decrypt. */
  established(cipher: CipherState | null): void {
    this.#handshake = false;
    this.#cipher = cipher;
  }

  push(chunk: Uint8Array): DecodeResult {
    if (this.#failed) return { frames: [], error: this.#failed };
    if (chunk.byteLength > 0) {
      this.#chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      this.#buffered += chunk.byteLength;
    }
    const frames: PeerFrame[] = [];
    try {
      for (;;) {
        if (this.#want < 0) {
          if (this.#buffered < 4) break;
          const head = this.#take(4);
          const length = head.readUInt32BE(0);
          const limit = this.#handshake ? MAX_HANDSHAKE_BYTES : this.#maxFrameBytes + (this.#cipher ? TAG_BYTES : 0);
          if (length > limit) return this.#fail(frames, `frame of ${length} bytes exceeds the limit of ${limit}`);
          if (length === 0) return this.#fail(frames, 'empty frame');
          this.#want = length;
        }
        // Wait until the whole frame is here: each chunk is then copied once at most (linear in bytes).
        if (this.#buffered < this.#want) break;
        const length = this.#want;
        this.#want = -1;
        const raw = this.#take(length);
        const payload = this.#cipher ? this.#open(raw, length) : raw;
        if (payload === null)
          return this.#fail(frames, 'frame failed to decrypt (wrong key, or a replayed, reordered or altered frame)');
        let value: unknown;
        try {
          value = unpackr.unpack(payload);
        } catch (err) {
          return this.#fail(frames, `malformed msgpack: ${(err as Error)?.message ?? String(err)}`.slice(0, 200));
        }
        if (this.#handshake) {
          const peek = peekHello(value);
          if (peek.v !== undefined && peek.v !== PROTOCOL_VERSION) {
            const r = this.#fail(frames, `incompatible protocol version ${peek.v} (mine ${PROTOCOL_VERSION})`);
            return { ...r, incompatible: { ...peek, v: peek.v } };
          }
        }
        const frame = decodePeerFrame(value);
        if (this.#handshake && !isHandshakeFrame(frame))
          return this.#fail(frames, `${frame.type} frame before the handshake completed`);
        frames.push(frame);
        // A hello/auth may switch the phase: the caller must call established() before more frames are read.
        if (this.#handshake) {
          if (this.#buffered > 0) this.#pendingAfterHandshake = true;
          break;
        }
      }
    } catch (err) {
      const why =
        err instanceof ValidationError ? err.message : `decoder failure: ${(err as Error)?.message ?? String(err)}`;
      return this.#fail(frames, why.slice(0, 300));
    }
    return { frames };
  }

  /** Frames already buffered behind a handshake frame (read them after changing phase). */
  drain(): DecodeResult {
    if (!this.#pendingAfterHandshake && this.#buffered === 0) return { frames: [] };
    this.#pendingAfterHandshake = false;
    return this.push(new Uint8Array(0));
  }

  /** The next `n` buffered bytes (n <= buffered): a view when they lie in one chunk, else one copy. */
  #take(n: number): Buffer {
    const first = this.#chunks[0]!;
    if (first.length - this.#offset >= n) {
      const out = first.subarray(this.#offset, this.#offset + n);
      this.#offset += n;
      if (this.#offset === first.length) {
        this.#chunks.shift();
        this.#offset = 0;
      }
      this.#buffered -= n;
      return out;
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const c = this.#chunks[0]!;
      const k = Math.min(n - filled, c.length - this.#offset);
      c.copy(out, filled, this.#offset, this.#offset + k);
      filled += k;
      this.#offset += k;
      if (this.#offset === c.length) {
        this.#chunks.shift();
        this.#offset = 0;
      }
    }
    this.#buffered -= n;
    return out;
  }

  #open(raw: Buffer, length: number): Buffer | null {
    const cipher = this.#cipher!;
    if (raw.length <= TAG_BYTES) return null;
    const head = Buffer.alloc(4);
    head.writeUInt32BE(length);
    try {
      const aead = createDecipheriv('aes-256-gcm', cipher.key, nonceOf(cipher.counter));
      aead.setAAD(head);
      aead.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      const body = Buffer.concat([aead.update(raw.subarray(0, raw.length - TAG_BYTES)), aead.final()]);
      cipher.counter++;
      return body;
    } catch {
      return null;
    }
  }

  #fail(frames: PeerFrame[], why: string): DecodeResult {
    this.#failed = why;
    this.#chunks = [];
    this.#offset = 0;
    this.#buffered = 0;
    return { frames, error: why };
  }
}
