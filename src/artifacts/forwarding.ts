/**
 * The chunks of artifacts being received that a downstream node of a broadcast chain asked for: those kept in
 * memory as they arrive (recent-chunks.ts), served from there instead of the disk.
 */
import { RecentChunks } from './recent-chunks.js';

export class Forwarding {
  readonly recent = new RecentChunks();
  readonly #asked = new Set<string>();

  /** A downstream asked for a chunk of `id` while it is being received: keep its chunks from now on. */
  ask(id: string): void {
    this.#asked.add(id);
  }

  /**
   * Kept to forward (a downstream asked): the receive buffer itself, given back once evicted. True when kept (the
   * writer's `onWritten`: the caller must then leave `data` alone).
   */
  written(id: string, index: number, data: Uint8Array, giveBack: (buf: Buffer) => void): boolean {
    return this.#asked.has(id) && Buffer.isBuffer(data) && this.recent.keep(id, index, data, giveBack);
  }

  /**
   * The transfer of `id` ended. The downstream may still be a few chunks behind: they stay a while, then the
   * memory goes back (unless a new transfer of `id` runs by then).
   */
  ended(id: string, receiving: (id: string) => boolean): void {
    this.#asked.delete(id);
    setTimeout(() => {
      if (!receiving(id)) this.recent.drop(id);
    }, 30_000).unref();
  }
}
