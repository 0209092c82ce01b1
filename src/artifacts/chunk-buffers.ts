/**
 * Chunk-sized buffers kept for reuse, per length. A fresh 4 MiB buffer costs a thousand page faults (dear on a VM)
 * and GC work; a pooled one is already mapped. They are page-aligned (native/aligned-memory.ts), so the writer can
 * hand them to the disk with O_DIRECT. Only buffers the pool made are taken back.
 */
import { alignedBuffer, isAligned } from '../native/aligned-memory.js';

export class ChunkBufferPool {
  readonly #free = new Map<number, Buffer[]>();
  constructor(readonly perLength = 8) {}

  /** A buffer of exactly `length` bytes (contents undefined): give it back with `give` once unreferenced. */
  take(length: number): Buffer {
    return this.#free.get(length)?.pop() ?? alignedBuffer(length);
  }

  /** A buffer nothing refers to any more (it will be overwritten). Others, and extras, are left to the GC. */
  give(buf: Uint8Array): void {
    if (!Buffer.isBuffer(buf) || !isAligned(buf)) return;
    const list = this.#free.get(buf.byteLength) ?? [];
    if (list.length >= this.perLength || list.includes(buf)) return;
    list.push(buf);
    this.#free.set(buf.byteLength, list);
  }

  clear(): void {
    this.#free.clear();
  }
}
