/**
 * Reads a model directory in the Hugging Face layout into its record (docs/artifacts.md, "Models"): `config.json`
 * and either one `model.safetensors` or the shards named by `model.safetensors.index.json`. Everything is read as
 * untrusted: bounded sizes, every header checked (safetensors-header.ts), the index and the headers agreeing
 * tensor by tensor. A malformed file is a `TORUS_MODEL_INVALID` naming it and the byte offset; a directory that is
 * not in this layout is no model (`undefined`); a record over the state's bound is a note, not a model.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ValidationError } from '../../protocols/errors.js';
import { compile } from '../../protocols/schema-kit.js';
import {
  checkModelRecord,
  MAX_MODEL_FILES,
  MAX_MODEL_RECORD_BYTES,
  MAX_MODEL_TENSORS,
  ModelRecord,
  type ModelTensorTuple,
} from '../../protocols/model-record.js';
import { layerOf } from './layer-names.js';
import { invalidModel, readSafetensorsHeader, type HeaderTensor } from './safetensors-header.js';

export const CONFIG = 'config.json';
export const SINGLE = 'model.safetensors';
export const INDEX = 'model.safetensors.index.json';
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

export interface ModelReading {
  readonly model?: ModelRecord;
  /** why a model directory has no record (it is too large for the replicated state) */
  readonly note?: string;
}

export function isModelDir(dir: string): boolean {
  return existsSync(join(dir, CONFIG)) && (existsSync(join(dir, SINGLE)) || existsSync(join(dir, INDEX)));
}

const recordCodec = compile(ModelRecord, 'event', 'model');

/** The record of the model in `dir`, or `undefined` when `dir` is not a model directory. */
export async function readModelDir(dir: string): Promise<ModelReading | undefined> {
  if (!isModelDir(dir)) return undefined;
  const config = readJsonObject(dir, CONFIG, MAX_CONFIG_BYTES);
  const sizes = configSizes(config);
  const files = existsSync(join(dir, INDEX)) ? shardsOf(readJsonObject(dir, INDEX, MAX_INDEX_BYTES)) : undefined;
  const paths = files ? [...new Set(files.values())].sort() : [SINGLE];
  if (paths.length > MAX_MODEL_FILES) throw invalidModel(INDEX, 0, `${paths.length} files, at most ${MAX_MODEL_FILES}`);
  const fileRecords: { path: string; bytes: number; dataStart: number }[] = [];
  const tensors: ModelTensorTuple[] = [];
  const bytesByDtype = new Map<string, number>();
  const seen = new Set<string>();
  for (const [i, path] of paths.entries()) {
    if (!existsSync(join(dir, path))) throw invalidModel(INDEX, 0, `it names ${path}, which is not in the directory`);
    const header = await readSafetensorsHeader(join(dir, path), path);
    fileRecords.push({ path, bytes: header.fileBytes, dataStart: header.dataStart });
    for (const t of header.tensors) {
      checkAgainstIndex(t, path, files);
      seen.add(t.name);
      tensors.push([t.name, i, t.dtype, t.shape, t.begin, t.end, layerOf(t.name, sizes.layers)]);
      bytesByDtype.set(t.dtype, (bytesByDtype.get(t.dtype) ?? 0) + t.end - t.begin);
    }
    if (tensors.length > MAX_MODEL_TENSORS)
      return { note: `${tensors.length}+ tensors: the replicated state records at most ${MAX_MODEL_TENSORS}` };
  }
  for (const name of files?.keys() ?? [])
    if (!seen.has(name)) throw invalidModel(INDEX, 0, `tensor "${name}" is in weight_map but in no file's header`);
  if (tensors.length === 0) throw invalidModel(paths[0]!, 8, 'no tensors');
  const dtype = [...bytesByDtype].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
  const record = { format: 'safetensors' as const, ...sizes, dtype, files: fileRecords, tensors };
  const size = Buffer.byteLength(JSON.stringify(record));
  if (size > MAX_MODEL_RECORD_BYTES)
    return {
      note: `its record (${tensors.length} tensors) takes ${size} bytes, over the replicated state's ${MAX_MODEL_RECORD_BYTES}-byte bound for one model`,
    };
  try {
    return { model: checkModelRecord(recordCodec.decode(record) as ModelRecord, 'model') };
  } catch (error) {
    if (error instanceof ValidationError)
      throw invalidModel(CONFIG, 0, `not a model torus can record: ${error.message}`);
    throw error;
  }
}

function readJsonObject(dir: string, name: string, max: number): Record<string, unknown> {
  const size = statSync(join(dir, name)).size;
  if (size > max) throw invalidModel(name, 0, `${size} bytes, over the ${max}-byte limit`);
  const text = readFileSync(join(dir, name), 'utf8');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (error) {
    const at = /position (\d+)/.exec((error as Error).message);
    const offset = at ? Buffer.byteLength(text.slice(0, Number(at[1]))) : 0;
    throw invalidModel(name, offset, `not JSON (${(error as Error).message})`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidModel(name, 0, 'not a JSON object');
  return v as Record<string, unknown>;
}

/** The sizes under the names the common configs use (multimodal ones keep them in `text_config`). */
function configSizes(config: Record<string, unknown>) {
  const text = typeof config.text_config === 'object' && config.text_config !== null ? config.text_config : {};
  const pick = (...keys: string[]): unknown => {
    for (const from of [config, text as Record<string, unknown>])
      for (const k of keys) if (from[k] !== undefined) return from[k];
    return undefined;
  };
  const whole = (what: string, ...keys: string[]): number => {
    const v = pick(...keys);
    if (!Number.isSafeInteger(v) || (v as number) < 1)
      throw invalidModel(
        CONFIG,
        0,
        `${what} (${keys.join(' / ')}) must be a whole number ≥ 1, got ${JSON.stringify(v)}`,
      );
    return v as number;
  };
  const archs = config.architectures;
  const modelType = typeof config.model_type === 'string' ? config.model_type : undefined;
  const architecture = Array.isArray(archs) && typeof archs[0] === 'string' ? archs[0] : modelType;
  if (!architecture) throw invalidModel(CONFIG, 0, 'neither "architectures" nor "model_type" names the architecture');
  const attentionHeads = whole('attention heads', 'num_attention_heads', 'n_head', 'n_heads');
  const kv = pick('num_key_value_heads', 'n_kv_heads', 'num_kv_heads');
  const tied = pick('tie_word_embeddings');
  return {
    architecture,
    ...(modelType ? { modelType } : {}),
    layers: whole('layer count', 'num_hidden_layers', 'n_layer', 'num_layers', 'n_layers'),
    hiddenSize: whole('hidden size', 'hidden_size', 'n_embd', 'd_model', 'dim'),
    kvHeads: kv === undefined ? attentionHeads : whole('kv heads', 'num_key_value_heads', 'n_kv_heads', 'num_kv_heads'),
    attentionHeads,
    ...(typeof tied === 'boolean' ? { tiedEmbeddings: tied } : {}),
  };
}

/** The index's `weight_map` (tensor → file): files are plain `*.safetensors` names in the same directory. */
function shardsOf(index: Record<string, unknown>): Map<string, string> {
  const map = index.weight_map;
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw invalidModel(INDEX, 0, '"weight_map" is not an object');
  const out = new Map<string, string>();
  for (const [name, file] of Object.entries(map)) {
    if (typeof file !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}\.safetensors$/.test(file))
      throw invalidModel(
        INDEX,
        0,
        `weight_map["${name.slice(0, 80)}"] is not a safetensors file name in this directory`,
      );
    out.set(name, file);
  }
  if (out.size === 0) throw invalidModel(INDEX, 0, '"weight_map" is empty');
  return out;
}

function checkAgainstIndex(t: HeaderTensor, path: string, files: Map<string, string> | undefined): void {
  if (!files) return;
  const named = files.get(t.name);
  if (named !== path)
    throw invalidModel(
      INDEX,
      0,
      `tensor "${t.name}" is in ${path}, but weight_map ${named ? `puts it in ${named}` : 'does not name it'}`,
    );
}
