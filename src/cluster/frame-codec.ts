/**
 * Length-prefixed msgpack framing for peer connections. `FrameDecoder` survives any byte stream: oversized
 * lengths, garbage msgpack, bad MACs and schema violations all end in one `{error}` result (the connection is
 * then closed with that reason); nothing throws past it. After the first error the decoder stays failed.
 */
import { Packr, Unpackr } from 'msgpackr';
import { ValidationError } from '../core/errors.js';
import { decodePeerFrame, isHandshakeFrame, MAX_FRAME_BYTES, MAX_HANDSHAKE_BYTES, peekHello, PROTOCOL_VERSION, type PeerFrame } from '../protocols/peer-frames.js';
import { frameMac, MAC_BYTES } from './auth.js';

const packr = new Packr({ useRecords: false, moreTypes: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });

export interface MacState { readonly key: Buffer; readonly senderId: string; seq: number }

/** Encodes one frame; with `mac` the HMAC is prepended and the counter advanced. */
export function encodeFrame(frame: PeerFrame, mac?: MacState | null): Buffer {
  // pack() reuses an internal scratch buffer: copy before it leaves.
  const payload = Buffer.from(packr.pack(frame));
  const head = Buffer.alloc(4);
  if (!mac) {
    head.writeUInt32BE(payload.length);
    return Buffer.concat([head, payload]);
  }
  const tag = frameMac(mac.key, mac.senderId, mac.seq++, payload);
  head.writeUInt32BE(payload.length + MAC_BYTES);
  return Buffer.concat([head, tag, payload]);
}

/** `incompatible` is set when the failure is a hello of another protocol version (listed, not just dropped). */
export type DecodeResult = { readonly frames: readonly PeerFrame[]; readonly error?: string; readonly incompatible?: { v: number; nodeId?: string; cluster?: string } };

export class FrameDecoder {
  #chunks: Buffer[] = [];
  #buffered = 0;
  #failed: string | null = null;
  #handshake = true;
  #mac: MacState | null = null;
  readonly #maxFrameBytes: number;

  constructor(options: { maxFrameBytes?: number } = {}) {
    this.#maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
  }

  get failed(): string | null {
    return this.#failed;
  }

  /** Leaves the handshake phase: bigger frames are allowed, and with a key every frame must carry a valid MAC. */
  established(mac: MacState | null): void {
    this.#handshake = false;
    this.#mac = mac;
  }

  push(chunk: Uint8Array): DecodeResult {
    if (this.#failed) return { frames: [], error: this.#failed };
    this.#chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.#buffered += chunk.byteLength;
    const frames: PeerFrame[] = [];
    try {
      for (;;) {
        if (this.#buffered < 4) break;
        const all = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
        this.#chunks = [all];
        const length = all.readUInt32BE(0);
        const limit = this.#handshake ? MAX_HANDSHAKE_BYTES : this.#maxFrameBytes + (this.#mac ? MAC_BYTES : 0);
        if (length > limit) return this.#fail(frames, `frame of ${length} bytes exceeds the limit of ${limit}`);
        if (length === 0) return this.#fail(frames, 'empty frame');
        if (this.#buffered < 4 + length) break;
        const raw = all.subarray(4, 4 + length);
        const rest = all.subarray(4 + length);
        this.#chunks = rest.length ? [rest] : [];
        this.#buffered = rest.length;
        let payload = raw;
        if (this.#mac) {
          if (raw.length <= MAC_BYTES) return this.#fail(frames, 'frame too short for its MAC');
          payload = raw.subarray(MAC_BYTES);
          const expected = frameMac(this.#mac.key, this.#mac.senderId, this.#mac.seq, payload);
          if (!expected.equals(raw.subarray(0, MAC_BYTES))) return this.#fail(frames, 'frame MAC mismatch (unauthenticated or replayed frame)');
          this.#mac.seq++;
        }
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
        if (this.#handshake && !isHandshakeFrame(frame)) return this.#fail(frames, `${frame.type} frame before the handshake completed`);
        frames.push(frame);
        // A hello/auth switches the phase: the caller must call established() before more frames are read.
        if (this.#handshake) {
          if (this.#buffered > 0) this.#pendingAfterHandshake = true;
          break;
        }
      }
    } catch (err) {
      const why = err instanceof ValidationError ? err.message : `decoder failure: ${(err as Error)?.message ?? String(err)}`;
      return this.#fail(frames, why.slice(0, 300));
    }
    return { frames };
  }

  #pendingAfterHandshake = false;

  /** Frames already buffered behind a handshake frame (read them after changing phase). */
  drain(): DecodeResult {
    if (!this.#pendingAfterHandshake && this.#buffered === 0) return { frames: [] };
    this.#pendingAfterHandshake = false;
    return this.push(new Uint8Array(0));
  }

  #fail(frames: PeerFrame[], why: string): DecodeResult {
    this.#failed = why;
    this.#chunks = [];
    this.#buffered = 0;
    return { frames, error: why };
  }
}
