/**
 * What this node serves its peers of its store (peer-server.ts routes): manifests, held chunk sets and chunks,
 * including those of a transfer still running (a broadcast chain's downstream reads them as they arrive).
 */
import type { ArtifactWriter } from './writer.js';
import type { Forwarding } from './forwarding.js';
import type { JournalBits } from './journal-bits.js';
import type { PeerBackend } from './peer-server.js';
import type { ArtifactStore } from './store.js';

export class ChunkServing implements PeerBackend {
  constructor(
    /** the cluster's data-plane key (null: --insecure-open) */
    readonly dataKey: string | null,
    private readonly store: ArtifactStore,
    private readonly journals: JournalBits,
    private readonly forwarding: Forwarding,
    /** the writer of a transfer running here */
    private readonly writerOf: (id: string) => ArtifactWriter | undefined,
    /** true once a transfer of `id` ran in this process */
    private readonly received: (id: string) => boolean,
    private readonly signal: AbortSignal,
    /** a peer's order to fetch `id` (a broadcast chain's) */
    readonly orderFetch: (id: string, body: { upstream?: string; name?: string }) => Promise<unknown>,
  ) {}

  manifestBytes(id: string): Buffer | undefined {
    return this.store.manifest(id)?.bytes;
  }

  /** Chunks held: a running transfer's, all of a complete artifact, or those a partial one's journal names (a stage holding serves them). */
  haveSet(id: string): Uint8Array | undefined {
    const w = this.writerOf(id);
    if (w) return w.have;
    const d = this.store.describe(id);
    if (!d) return undefined;
    return d.complete ? new Uint8Array(d.chunks).fill(1) : this.journals.bits(id, d.chunks);
  }

  #holds(id: string, index: number): boolean {
    const w = this.writerOf(id);
    if (w) return !!w.have[index];
    const info = this.store.info(id);
    if (!info) return false;
    return info.complete || !!this.haveSet(id)?.[index];
  }

  async waitForChunk(id: string, index: number, ms: number): Promise<boolean> {
    if (this.writerOf(id)) this.forwarding.ask(id);
    const end = Date.now() + ms;
    for (;;) {
      const w = this.writerOf(id);
      if (w ? w.have[index] : this.#holds(id, index)) return true;
      const left = end - Date.now();
      if (left <= 0 || this.signal.aborted) return false;
      if (w) await w.waitFor(index, left);
      else await new Promise((r) => setTimeout(r, Math.min(100, left)));
    }
  }

  chunkLengths(id: string): readonly number[] | undefined {
    return this.store.manifest(id)?.refs.map((r) => r.length);
  }

  readChunk(id: string, index: number): Promise<Buffer> {
    const recent = this.forwarding.recent.take(id, index);
    // Received here (a transfer ran in this process): on disk past the page cache, read it the same way.
    return recent ? Promise.resolve(recent) : this.store.readChunk(id, index, { direct: this.received(id) });
  }

  releaseChunk(buf: Buffer): void {
    if (!this.forwarding.recent.release(buf)) this.store.releaseChunk(buf);
  }
}
