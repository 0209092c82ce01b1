/**
 * The chunks of a model artifact one pipeline stage needs (docs/artifacts.md, "Models"): every chunk that
 * overlaps a byte range of one of the stage's tensors (`stageTensors`), and every chunk of `config.json` and the
 * tokenizer files the shard directory copies. Nothing else: not the safetensors headers (the shard writer makes
 * new ones), not the source index, not other files of the directory. Pure, so the transfer, the gate and the
 * distribution bound all count the same set.
 */
import { TorusError } from '../../protocols/errors.js';
import type { ModelRecord } from '../../protocols/model-record.js';
import type { Manifest } from '../manifest.js';
import { CONFIG } from './model-reader.js';
import { SMALL_FILES, stageTensors } from './shard-writer.js';

export interface LayerRange {
  readonly fromLayer: number;
  /** exclusive */
  readonly toLayer: number;
}

/** Where each file's chunks start in the artifact's chunk numbering, by path. */
function fileChunks(manifest: Manifest): Map<string, { first: number; size: number; count: number }> {
  const out = new Map<string, { first: number; size: number; count: number }>();
  let first = 0;
  for (const f of manifest.files) {
    out.set(f.path, { first, size: f.size, count: f.chunks.length });
    first += f.chunks.length;
  }
  return out;
}

/** The stage's chunk indices, ascending. A record that does not match the manifest (a file missing or of another size) is refused. */
export function stageChunks(manifest: Manifest, model: ModelRecord, stage: LayerRange): number[] {
  const files = fileChunks(manifest);
  const cs = manifest.chunkSize;
  const out = new Set<number>();
  const wanted = new Set(stageTensors(model, stage));
  for (const [name, file, , , begin, end] of model.tensors) {
    if (!wanted.has(name) || end <= begin) continue;
    const path = model.files[file]?.path;
    const f = path === undefined ? undefined : files.get(path);
    if (!f || f.size !== model.files[file]!.bytes)
      throw new TorusError(
        'TORUS_MODEL_INVALID',
        `the model record names ${path ?? `file ${file}`} (${model.files[file]?.bytes ?? '?'} bytes), which the artifact's manifest does not have at that size`,
      );
    for (let c = Math.floor(begin / cs); c <= Math.floor((end - 1) / cs); c++) out.add(f.first + c);
  }
  for (const path of [CONFIG, ...SMALL_FILES]) {
    const f = files.get(path);
    if (f) for (let c = 0; c < f.count; c++) out.add(f.first + c);
  }
  return [...out].sort((a, b) => a - b);
}

/** The bytes of those chunks (what a node receives for its stage). */
export function chunksBytes(manifest: Manifest, chunks: readonly number[]): number {
  const lengths: number[] = [];
  for (const f of manifest.files)
    for (let j = 0; j < f.chunks.length; j++)
      lengths.push(Math.min(manifest.chunkSize, f.size - j * manifest.chunkSize));
  return chunks.reduce((a, i) => a + (lengths[i] ?? 0), 0);
}
