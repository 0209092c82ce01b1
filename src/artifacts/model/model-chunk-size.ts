/**
 * The chunk size of a model artifact, chosen at `artifacts add` (docs/artifacts.md, "Models"): a node of a
 * pipeline fetches whole chunks, so the chunks at the edges of its stage's byte ranges carry bytes of tensors it
 * does not need. Every chunk costs CPU per request, hash and write (a 128 KiB chunk about twice what a 4 MiB one
 * does per byte), so the size is the largest power of two between 64 KiB and the 4 MiB default whose worst
 * over-fetch, over every pipeline stage a placement can make (every contiguous layer range, with the embeddings,
 * norm, head and `all` tensors it takes: `stageTensors`), is at most MAX_OVER_FETCH of that stage's tensor bytes.
 * Never smaller than the older rule (a chunk at most 1/256 of the smallest layer), which artifacts added before
 * keep: the chunk size is in the manifest, so nothing else changes for them or for a node of an older build. Then
 * doubled while the manifest would pass its chunk-count or byte bound.
 */
import type { ModelRecord } from '../../protocols/model-record.js';
import { DEFAULT_CHUNK_SIZE, MAX_CHUNK_SIZE, MIN_CHUNK_SIZE } from '../ids.js';
import { MAX_CHUNKS, MAX_MANIFEST_BYTES } from '../manifest.js';
import { stageTensors } from './shard-writer.js';

/** the older rule's floor: chunk ≤ smallest layer / EDGE_SHARE */
export const EDGE_SHARE = 256;
/** a stage's chunks carry at most this share of its tensors' bytes more */
export const MAX_OVER_FETCH = 0.01;
/** stages × tensors above which the stages are not all evaluated (the older rule alone then) */
const MAX_WORK = 20_000_000;

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

/**
 * The largest share of its tensors' bytes that any contiguous stage's chunks carry beyond them, at `chunkSize`
 * (the chunks of config and tokenizer files, whole files a stage needs anyway, are not counted).
 */
export function worstOverFetch(model: ModelRecord, chunkSize: number): number {
  let worst = 0;
  for (let from = 0; from < model.layers; from++)
    for (let to = from + 1; to <= model.layers; to++) {
      const names = new Set(stageTensors(model, { fromLayer: from, toLayer: to }));
      const covered = new Map<number, Set<number>>();
      let tensorBytes = 0;
      for (const [name, file, , , begin, end] of model.tensors) {
        if (!names.has(name) || end <= begin) continue;
        tensorBytes += end - begin;
        const set = covered.get(file) ?? new Set<number>();
        covered.set(file, set);
        for (let c = Math.floor(begin / chunkSize); c <= Math.floor((end - 1) / chunkSize); c++) set.add(c);
      }
      let chunkBytes = 0;
      for (const [file, set] of covered) {
        const size = model.files[file]?.bytes ?? 0;
        for (const c of set) chunkBytes += Math.max(0, Math.min(chunkSize, size - c * chunkSize));
      }
      if (tensorBytes > 0) worst = Math.max(worst, (chunkBytes - tensorBytes) / tensorBytes);
    }
  return worst;
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
    const stages = (model.layers * (model.layers + 1)) / 2;
    if (stages * model.tensors.length <= MAX_WORK)
      for (let bigger = DEFAULT_CHUNK_SIZE; bigger > size; bigger /= 2)
        if (worstOverFetch(model, bigger) <= MAX_OVER_FETCH) {
          size = bigger;
          break;
        }
  }
  const chunks = (s: number): number => files.reduce((a, f) => a + Math.ceil(f.size / s), 0);
  while (size < MAX_CHUNK_SIZE && (chunks(size) > MAX_CHUNKS || manifestBytes(files, size) > MAX_MANIFEST_BYTES))
    size *= 2;
  return size;
}
