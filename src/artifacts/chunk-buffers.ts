/**
 * Chunk-sized buffers kept for reuse, per length. A fresh 4 MiB buffer costs a thousand page faults (dear on a VM)
 * and GC work; a pooled one is already mapped. They are page-aligned (native/aligned-memory.ts), so the writer can
 * hand them to the disk with O_DIRECT. Only buffers the pool made are taken back. A pool unused for IDLE_MS lets
 * its buffers go (a node between transfers should not hold a transfer's worth of memory).
 */
import { alignedBuffer } from '../native/aligned-memory.js';

const IDLE_MS = 30_000;

export class ChunkBufferPool {
  readonly #free = new Map<number, Buffer[]>();
  /** every buffer this pool made: only those come back */
  readonly #made = new WeakSet<Uint8Array>();
  #idle: NodeJS.Timeout | undefined;
  /** Keeps up to `perLength` buffers of each length, or more small ones: as many as fit in `bytesPerLength`. */
  constructor(
    readonly perLength = 8,
    readonly idleMs = IDLE_MS,
    readonly bytesPerLength = 0,
  ) {}

  /** A buffer of exactly `length` bytes (contents undefined): give it back with `give` once unreferenced. */
  take(length: number): Buffer {
    this.#touch();
    const reused = this.#free.get(length)?.pop();
    if (reused) return reused;
    const made = alignedBuffer(length);
    this.#made.add(made);
    return made;
  }

  /** A buffer nothing refers to any more (it will be overwritten). Others, and extras, are left to the GC. */
  give(buf: Uint8Array): void {
    if (!Buffer.isBuffer(buf) || !this.#made.has(buf)) return;
    const list = this.#free.get(buf.byteLength) ?? [];
    const keep = Math.max(this.perLength, Math.floor(this.bytesPerLength / buf.byteLength));
    if (list.length >= keep || list.includes(buf)) return;
    list.push(buf);
    this.#free.set(buf.byteLength, list);
    this.#touch();
  }

  /** How many buffers wait for reuse. */
  get size(): number {
    let n = 0;
    for (const list of this.#free.values()) n += list.length;
    return n;
  }

  clear(): void {
    clearTimeout(this.#idle);
    this.#idle = undefined;
    this.#free.clear();
  }

  #touch(): void {
    if (this.#idle) {
      this.#idle.refresh();
      return;
    }
    this.#idle = setTimeout(() => this.clear(), this.idleMs);
    this.#idle.unref();
  }
}
