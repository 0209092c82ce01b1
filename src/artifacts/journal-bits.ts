/**
 * The chunks a partial artifact holds when no transfer of it runs, read from its `verified.log` journal (uint32
 * LE indices of chunks verified and durable): what a stage holding serves to other nodes and reports in its
 * holding. Cached per artifact and re-read only when the journal's size changed (it only grows while partial).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';

export class JournalBits {
  readonly #cache = new Map<string, { size: number; bits: Uint8Array }>();
  constructor(private readonly journalOf: (id: string) => string) {}

  /** Held chunks of `id` (of `chunks`); none when it has no journal. Indices out of range are ignored. */
  bits(id: string, chunks: number): Uint8Array {
    const path = this.journalOf(id);
    const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    const cached = this.#cache.get(id);
    if (cached && cached.size === size && cached.bits.length === chunks) return cached.bits;
    const bits = cached && cached.size < size && cached.bits.length === chunks ? cached.bits : new Uint8Array(chunks);
    const from = bits === cached?.bits ? cached.size : 0;
    if (size > from) {
      const raw = Buffer.alloc(size - from);
      const fd = openSync(path, 'r');
      try {
        readSync(fd, raw, 0, raw.length, from);
      } finally {
        closeSync(fd);
      }
      for (let o = 0; o + 4 <= raw.length; o += 4) {
        const i = raw.readUInt32LE(o);
        if (i < chunks) bits[i] = 1;
      }
    }
    // Only whole entries count: a torn last entry is read again once complete.
    this.#cache.set(id, { size: size - (size % 4), bits });
    if (this.#cache.size > 1024) this.#cache.delete(this.#cache.keys().next().value!);
    return bits;
  }

  forget(id: string): void {
    this.#cache.delete(id);
  }
}
