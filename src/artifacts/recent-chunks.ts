/**
 * The chunks a node received last, kept in memory for the node after it in a broadcast chain. The writer puts
 * chunks on disk with O_DIRECT (no page-cache copy), so reading one back to forward it would go to the disk; the
 * downstream asks for chunk i moments after this node verified it, so the very buffer it arrived in serves it.
 * `keep` takes the buffer over (no copy) with the function that gives it back to its owner's pool once it is
 * evicted. A served buffer is pinned until it is sent (`release`); eviction (oldest first, beyond `capacity`)
 * skips pinned ones, and a pinned buffer evicted meanwhile is given back when released.
 */
interface Entry {
  readonly key: string;
  readonly buf: Buffer;
  readonly giveBack: (buf: Buffer) => void;
  pins: number;
  evicted: boolean;
}

export class RecentChunks {
  readonly #entries = new Map<string, Entry>();
  readonly #byBuffer = new Map<Buffer, Entry>();

  constructor(readonly capacity = 16) {}

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Keeps `buf` as chunk `index` of artifact `id`; false (and `buf` stays the caller's) when that chunk is already
   * here. Whoever wrote into `buf` must not touch it again: `giveBack` tells when it may.
   */
  keep(id: string, index: number, buf: Buffer, giveBack: (buf: Buffer) => void): boolean {
    const key = `${id}:${index}`;
    if (this.#entries.has(key) || this.#byBuffer.has(buf)) return false;
    const entry: Entry = { key, buf, giveBack, pins: 0, evicted: false };
    this.#entries.set(key, entry);
    this.#byBuffer.set(buf, entry);
    for (const old of this.#entries.values()) {
      if (this.#entries.size <= this.capacity) break;
      if (old.pins === 0) this.#evict(old);
    }
    return true;
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
  }

  #evict(entry: Entry): void {
    this.#entries.delete(entry.key);
    entry.evicted = true;
    if (entry.pins === 0) this.#free(entry);
  }

  #free(entry: Entry): void {
    this.#byBuffer.delete(entry.buf);
    entry.giveBack(entry.buf);
  }
}
