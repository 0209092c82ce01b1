/**
 * What one verified byte costs in CPU on this machine: the receiving side's own work on a chunk that has arrived,
 * through the real writer (src/artifacts/writer.ts: SHA-256 against the manifest, the O_DIRECT write, the batched
 * fdatasync and journal), with the chunks already in memory (the network's share is not counted: the figure is a
 * floor for what a receiver spends). User + system CPU of this process over the writes, per byte.
 */
import { mkdtempSync, rmSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ArtifactStore } from '../../src/artifacts/store.js';
import { ArtifactWriter } from '../../src/artifacts/writer.js';
import { alignedBuffer } from '../../src/native/aligned-memory.js';

export interface CpuCost {
  readonly bytes: number;
  readonly chunkSize: number;
  /** CPU seconds (user + system) per verified byte */
  readonly secondsPerByte: number;
  readonly msPerMiB: number;
  readonly wallSeconds: number;
}

/** Writes `bytes` (whole MiB) through the real writer in chunks of `chunkSize` under `dir` (the store's filesystem). */
export async function measureVerifiedByteCost(
  bytes = 128 * 2 ** 20,
  chunkSize = 4 * 2 ** 20,
  dir = tmpdir(),
): Promise<CpuCost> {
  const tmp = mkdtempSync(join(dir, 'torus-cpu-cost-'));
  try {
    const file = join(tmp, 'src.bin');
    const fd = openSync(file, 'w');
    for (let i = 0; i < bytes / 2 ** 20; i++) writeSync(fd, randomBytes(2 ** 20));
    closeSync(fd);
    const source = new ArtifactStore(join(tmp, 'a'));
    const added = await source.add(file, { chunkSize });
    const { manifest, bytes: manifestBytes } = source.manifest(added.id)!;
    // The chunks in page-aligned buffers, as the chunk client receives them (so the writer can go direct).
    const chunks: Buffer[] = [];
    for (let i = 0; i < added.chunks; i++) {
      const c = await source.readChunk(added.id, i);
      const b = alignedBuffer(c.byteLength);
      c.copy(b);
      source.releaseChunk(c);
      chunks.push(b);
    }
    source.closeReaders();
    const writer = ArtifactWriter.create(join(tmp, 'b'), added.id, manifest, manifestBytes, {
      name: 'cpu-cost',
      addedAt: Date.now(),
    });
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < chunks.length; i++) await writer.write(i, chunks[i]!);
    await writer.finish();
    const wallSeconds = (performance.now() - t0) / 1000;
    const used = process.cpuUsage(cpu0);
    const seconds = (used.user + used.system) / 1e6;
    return {
      bytes,
      chunkSize,
      secondsPerByte: seconds / bytes,
      msPerMiB: (seconds * 1000) / (bytes / 2 ** 20),
      wallSeconds,
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
