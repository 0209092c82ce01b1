/**
 * The piscina task `artifacts.sha256`: the SHA-256 (hex) of a chunk received into shared memory
 * (native/aligned-memory.ts), hashed by a pool thread while the receiving thread goes on reading sockets. The
 * buffer is shared, not copied: only its place travels.
 */
import { sha256Hex } from './ids.js';

export interface HashInput {
  readonly buffer: SharedArrayBuffer;
  readonly offset: number;
  readonly length: number;
}

export default function sha256OfShared(input: unknown): string {
  const { buffer, offset, length } = (input ?? {}) as Partial<HashInput>;
  if (
    !(buffer instanceof SharedArrayBuffer) ||
    !Number.isSafeInteger(offset) ||
    !Number.isSafeInteger(length) ||
    offset! < 0 ||
    length! < 0 ||
    offset! + length! > buffer.byteLength
  ) {
    throw new TypeError('artifacts.sha256: expected { buffer: SharedArrayBuffer, offset, length } within the buffer');
  }
  return sha256Hex(new Uint8Array(buffer, offset, length));
}
