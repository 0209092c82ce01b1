/**
 * The chunk size of a model artifact, chosen at `artifacts add` (docs/artifacts.md, "Models"): a node of a
 * pipeline fetches whole chunks, so the chunks at the edges of its stage's byte ranges carry bytes of tensors it
 * does not need. With chunks at most 1/256 of the smallest layer, those edges cost well under 1 % of a stage (the
 * stage holds at least one layer; the edges of its runs of tensors are a few chunks). A power of two between 64 KiB
 * and the 4 MiB default, then doubled while the manifest would pass its chunk-count or byte bound.
 */
import type { ModelRecord } from '../../protocols/model-record.js';
import { DEFAULT_CHUNK_SIZE, MAX_CHUNK_SIZE, MIN_CHUNK_SIZE } from '../ids.js';
import { MAX_CHUNKS, MAX_MANIFEST_BYTES } from '../manifest.js';

/** chunk ≤ smallest layer / EDGE_SHARE */
export const EDGE_SHARE = 256;

/** Bytes of the canonical manifest for files of these sizes at `chunkSize`: 67 per chunk hash ("…",) plus the entries. */
function manifestBytes(files: readonly { path: string; size: number }[], chunkSize: number): number {
  let total = 40;
  for (const f of files)
    total +=
      JSON.stringify({ path: f.path, size: f.size, mode: 420, chunks: [] }).length +
      1 +
      67 * Math.ceil(f.size / chunkSize);
  return total;
}

export function modelChunkSize(model: ModelRecord, files: readonly { path: string; size: number }[]): number {
  const perLayer = new Array<number>(model.layers).fill(0);
  for (const [, , , , begin, end, layer] of model.tensors)
    if (typeof layer === 'number') perLayer[layer]! += end - begin;
  const smallest = Math.min(...perLayer.filter((b) => b > 0));
  let size = DEFAULT_CHUNK_SIZE;
  if (Number.isFinite(smallest)) {
    size = MIN_CHUNK_SIZE;
    while (size * 2 <= smallest / EDGE_SHARE && size * 2 <= DEFAULT_CHUNK_SIZE) size *= 2;
  }
  const chunks = (s: number): number => files.reduce((a, f) => a + Math.ceil(f.size / s), 0);
  while (size < MAX_CHUNK_SIZE && (chunks(size) > MAX_CHUNKS || manifestBytes(files, size) > MAX_MANIFEST_BYTES))
    size *= 2;
  return size;
}
