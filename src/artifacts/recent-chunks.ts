/**
 * The chunks a node received last, kept in memory for the node after it in a broadcast chain. The writer puts
 * chunks on disk with O_DIRECT (no page-cache copy), so reading one back to forward it would go to the disk; the
 * downstream asks for chunk i moments after this node verified it, so a copy made then serves it from memory.
 * A served buffer is pinned until it is sent (`release`); eviction (oldest first, beyond `capacity`) skips pinned
 * ones, and a pinned buffer evicted meanwhile goes back to the pool when released.
 */
import { ChunkBufferPool } from './chunk-buffers.js';

interface Entry { readonly key: string; readonly buf: Buffer; pins: number; evicted: boolean }

export class RecentChunks {
  readonly #entries = new Map<string, Entry>();
  readonly #byBuffer = new Map<Buffer, Entry>();
  readonly #pool: ChunkBufferPool;

  constructor(readonly capacity = 16) {
    this.#pool = new ChunkBufferPool(capacity);
  }

  get size(): number { return this.#entries.size; }

  /** Keeps a copy of chunk `index` of artifact `id`. */
  keep(id: string, index: number, data: Uint8Array): void {
    const key = `${id}:${index}`;
    if (this.#entries.has(key)) return;
    const buf = this.#pool.take(data.byteLength);
    buf.set(data);
    const entry: Entry = { key, buf, pins: 0, evicted: false };
    this.#entries.set(key, entry);
    this.#byBuffer.set(buf, entry);
    for (const old of this.#entries.values()) {
      if (this.#entries.size <= this.capacity) break;
      if (old.pins === 0) this.#evict(old);
    }
  }

  /** Chunk `index` of `id` if it is here, pinned until `release`. */
  take(id: string, index: number): Buffer | undefined {
    const entry = this.#entries.get(`${id}:${index}`);
    if (!entry) return undefined;
    entry.pins++;
    return entry.buf;
  }

  /** Unpins a buffer `take` returned; false if it is not one of ours. */
  release(buf: Buffer): boolean {
    const entry = this.#byBuffer.get(buf);
    if (!entry) return false;
    entry.pins = Math.max(0, entry.pins - 1);
    if (entry.pins === 0 && entry.evicted) this.#free(entry);
    return true;
  }

  /** Forgets every chunk of `id` (removed from the store); pinned ones are freed when released. */
  drop(id: string): void {
    for (const entry of [...this.#entries.values()]) if (entry.key.startsWith(`${id}:`)) this.#evict(entry);
    if (this.#entries.size === 0) this.#pool.clear(); // nothing to forward: the memory goes back
  }

  #evict(entry: Entry): void {
    this.#entries.delete(entry.key);
    entry.evicted = true;
    if (entry.pins === 0) this.#free(entry);
  }

  #free(entry: Entry): void {
    this.#byBuffer.delete(entry.buf);
    this.#pool.give(entry.buf);
  }
}
