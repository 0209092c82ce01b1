/**
 * Writes a shard directory: the tensors a pipeline stage needs, in the same Hugging Face layout as the model, so
 * an unmodified safetensors / transformers / MLX loader reads it (docs/artifacts.md, "Models"). Each source file
 * with a chosen tensor becomes a file of the same name holding exactly the chosen tensors (their bytes copied from
 * their byte ranges, new offsets, header padded to 8 bytes as the reference writer does);
 * `model.safetensors.index.json` names only them; `config.json` and the tokenizer files are copied as they are.
 * The source only needs the chosen byte ranges and the small files: a store's partial copy of the artifact, whose
 * files sit at their final size with the fetched ranges in place, serves as well as a complete one. The directory
 * appears whole or not at all (written beside it, then renamed). The bytes move with direct I/O (shard-copy.ts).
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TorusError } from '../../protocols/errors.js';
import type { ModelRecord, ModelTensorTuple } from '../../protocols/model-record.js';
import { CONFIG, INDEX } from './model-reader.js';
import { RangeReader, SequentialWriter } from './shard-copy.js';

/** Copied with config.json when the source has them: what a loader reads beside the weights. */
export const SMALL_FILES: readonly string[] = [
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'tokenizer.model',
];

export interface ShardDirectory {
  readonly files: readonly string[];
  readonly tensors: number;
  /** bytes of tensor data written (headers not counted) */
  readonly bytes: number;
}

/** The tensors of one pipeline stage: its blocks, the embeddings on the first stage, norm and head on the last, and every `all` tensor. */
export function stageTensors(
  model: ModelRecord,
  stage: { readonly fromLayer: number; readonly toLayer: number },
): string[] {
  const first = stage.fromLayer === 0;
  const last = stage.toLayer >= model.layers;
  return model.tensors
    .filter(([, , , , , , layer]) =>
      typeof layer === 'number'
        ? layer >= stage.fromLayer && layer < stage.toLayer
        : layer === 'all' ||
          (layer === 'embed' && (first || (last && model.tiedEmbeddings === true))) ||
          ((layer === 'norm' || layer === 'head') && last),
    )
    .map(([name]) => name);
}

function safetensorsHeader(tensors: readonly ModelTensorTuple[]): Buffer {
  const entries: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let at = 0;
  for (const [name, , dtype, shape, begin, end] of tensors) {
    entries[name] = { dtype, shape, data_offsets: [at, at + end - begin] };
    at += end - begin;
  }
  const json = Buffer.from(JSON.stringify(entries));
  const padded = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, ' ')]);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(padded.length));
  return Buffer.concat([length, padded]);
}

/** The tensors of `names`, by source file index, each file's in offset order (as the shard writes them). */
function chosenByFile(model: ModelRecord, names: readonly string[]): [number, ModelTensorTuple[]][] {
  const wanted = new Set(names);
  const byFile = new Map<number, ModelTensorTuple[]>();
  for (const t of model.tensors) if (wanted.has(t[0])) byFile.set(t[1], [...(byFile.get(t[1]) ?? []), t]);
  for (const tensors of byFile.values()) tensors.sort((a, b) => a[4] - b[4]);
  return [...byFile].sort((a, b) => a[0] - b[0]);
}

/** The size of each file of the shard holding `names`: its header and its tensors' bytes (what a check of a built directory compares). */
export function shardFileSizes(model: ModelRecord, names: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const [file, tensors] of chosenByFile(model, names))
    out.set(
      model.files[file]!.path,
      safetensorsHeader(tensors).length + tensors.reduce((a, [, , , , begin, end]) => a + end - begin, 0),
    );
  return out;
}

/**
 * Writes the shard holding `names` (tensors of `model`) from `sourceDir` (the model's files at their paths) to
 * `outDir`, which must not exist yet.
 */
export async function writeShardDirectory(
  model: ModelRecord,
  names: readonly string[],
  sourceDir: string,
  outDir: string,
): Promise<ShardDirectory> {
  if (existsSync(outDir)) throw new TorusError('TORUS_API_VALIDATION', `${outDir} exists already`);
  const wanted = new Set(names);
  const chosen = model.tensors.filter(([name]) => wanted.has(name));
  if (chosen.length !== wanted.size) {
    const known = new Set(model.tensors.map(([name]) => name));
    const missing = [...wanted].filter((n) => !known.has(n));
    throw new TorusError('TORUS_API_VALIDATION', `not tensors of this model: ${missing.slice(0, 5).join(', ')}`);
  }
  const staging = join(dirname(outDir), `.shard-${randomBytes(6).toString('hex')}`);
  mkdirSync(staging, { recursive: true, mode: 0o755 });
  const weightMap: Record<string, string> = {};
  const files: string[] = [];
  let bytes = 0;
  try {
    for (const [file, tensors] of chosenByFile(model, names)) {
      const path = model.files[file]!.path;
      const from = await RangeReader.open(join(sourceDir, path));
      const to = await SequentialWriter.create(join(staging, path)).catch(async (error: unknown) => {
        await from.close();
        throw error;
      });
      try {
        await to.append(safetensorsHeader(tensors));
        for (const [name, , , , begin, end] of tensors) {
          await from.copy(begin, end, (piece) => to.append(piece));
          weightMap[name] = path;
          bytes += end - begin;
        }
        await to.finish();
      } finally {
        await Promise.all([from.close(), to.close()]);
      }
      files.push(path);
    }
    copyFileSync(join(sourceDir, CONFIG), join(staging, CONFIG));
    for (const f of SMALL_FILES) if (existsSync(join(sourceDir, f))) copyFileSync(join(sourceDir, f), join(staging, f));
    writeFileSync(
      join(staging, INDEX),
      `${JSON.stringify({ metadata: { total_size: bytes }, weight_map: weightMap }, null, 2)}\n`,
    );
    renameSync(staging, outDir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return { files, tensors: chosen.length, bytes };
}
