/**
 * Writes a model directory in the Hugging Face layout for tests and benchmarks, so none needs the internet: a
 * Llama-style `config.json`, random BF16 weights sized to about `bytes` (a little under), in `shards` safetensors
 * files with `model.safetensors.index.json` (one shard: a single `model.safetensors`, no index). The weights are
 * xorshift128 output seeded from `seed`: deterministic, every tensor's bytes different, made in 16 MiB blocks at
 * ~500 MB/s on one loaded core (node's AES-CTR ran at ~100 MB/s here; `randomFill` cannot be seeded). Each BF16
 * keeps its random sign and mantissa with an exponent in 2^-7..2^-4, so every weight is a finite ±[2^-7, 2^-3):
 * raw random bits hold infinities and NaNs, and a forward pass through them (benchmarks/model-placement) is NaN.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface MakeModelOptions {
  readonly out: string;
  readonly bytes: number;
  readonly layers: number;
  readonly shards: number;
  readonly seed?: string;
}

export interface MadeModel {
  readonly bytes: number;
  readonly tensors: number;
  readonly files: readonly string[];
  readonly hiddenSize: number;
  readonly vocab: number;
}

interface Tensor {
  readonly name: string;
  readonly shape: readonly [number, number] | readonly [number];
}

const BLOCK = 16 * 1024 * 1024;
const HEAD_DIM = 64;
const tensorBytes = (t: Tensor): number => 2 * t.shape.reduce((a, b) => a * b, 1);
/** Grouped-query attention as Llama 3 has it: a quarter as many kv heads, where the head count allows. */
const kvHeadsOf = (heads: number): number => (heads % 4 === 0 ? heads / 4 : heads);

function plan(hidden: number, vocab: number, layers: number): Tensor[] {
  const kv = kvHeadsOf(hidden / HEAD_DIM) * HEAD_DIM;
  const inter = Math.ceil((hidden * 8) / 3 / 64) * 64;
  const out: Tensor[] = [{ name: 'model.embed_tokens.weight', shape: [vocab, hidden] }];
  for (let l = 0; l < layers; l++) {
    const p = `model.layers.${l}.`;
    out.push(
      { name: `${p}input_layernorm.weight`, shape: [hidden] },
      { name: `${p}mlp.down_proj.weight`, shape: [hidden, inter] },
      { name: `${p}mlp.gate_proj.weight`, shape: [inter, hidden] },
      { name: `${p}mlp.up_proj.weight`, shape: [inter, hidden] },
      { name: `${p}post_attention_layernorm.weight`, shape: [hidden] },
      { name: `${p}self_attn.k_proj.weight`, shape: [kv, hidden] },
      { name: `${p}self_attn.o_proj.weight`, shape: [hidden, hidden] },
      { name: `${p}self_attn.q_proj.weight`, shape: [hidden, hidden] },
      { name: `${p}self_attn.v_proj.weight`, shape: [kv, hidden] },
    );
  }
  out.push({ name: 'model.norm.weight', shape: [hidden] }, { name: 'lm_head.weight', shape: [vocab, hidden] });
  return out;
}

/**
 * The widest model (hidden size a multiple of 64) of `layers` layers that fits in `bytes` with a vocabulary of
 * about a tenth of the bytes (at most 32000); what is left over then widens the vocabulary, so the model is
 * within 256 × hidden bytes under `bytes`.
 */
function size(bytes: number, layers: number): { hidden: number; vocab: number; tensors: Tensor[] } {
  let best: { hidden: number; vocab: number; tensors: Tensor[] } | undefined;
  for (let hidden = 64; ; hidden += 64) {
    const vocab = Math.min(32000, Math.max(64, Math.floor(bytes / 10 / (4 * hidden) / 64) * 64));
    const tensors = plan(hidden, vocab, layers);
    if (tensors.reduce((a, t) => a + tensorBytes(t), 0) > bytes) break;
    best = { hidden, vocab, tensors };
  }
  if (!best) throw new Error(`${bytes} bytes are too few for a model of ${layers} layers`);
  // The rest goes to the vocabulary (embeddings and head grow by 4 × hidden bytes per token), in steps of 64 tokens.
  const used = best.tensors.reduce((a, t) => a + tensorBytes(t), 0);
  const vocab = best.vocab + Math.floor((bytes - used) / (4 * best.hidden) / 64) * 64;
  return { hidden: best.hidden, vocab, tensors: plan(best.hidden, vocab, layers) };
}

/** Two BF16 per word: sign and mantissa random, exponent bits 0b011110xx (2^-7..2^-4): finite and small. */
const BF16_KEEP = 0x81ff81ff;
const BF16_EXPONENT = 0x3c003c00;

/** Fills `out` with the next words of a xorshift128 stream (Marsaglia 2003) as bounded BF16 pairs; `s` is its state. */
function fillRandom(out: Uint32Array, s: Uint32Array): void {
  let [x, y, z, w] = s as unknown as [number, number, number, number];
  for (let i = 0; i < out.length; i++) {
    const t = x ^ (x << 11);
    x = y;
    y = z;
    z = w;
    w = w ^ (w >>> 19) ^ (t ^ (t >>> 8));
    out[i] = (w & BF16_KEEP) | BF16_EXPONENT;
  }
  s.set([x, y, z, w]);
}

/** Splits the tensors, in order, into `shards` runs of about equal bytes. */
function split(tensors: Tensor[], shards: number): Tensor[][] {
  const total = tensors.reduce((a, t) => a + tensorBytes(t), 0);
  const out: Tensor[][] = [[]];
  let done = 0;
  for (const t of tensors) {
    const current = out[out.length - 1]!;
    if (current.length > 0 && out.length < shards && done >= (total * out.length) / shards) out.push([t]);
    else current.push(t);
    done += tensorBytes(t);
  }
  return out;
}

function header(tensors: Tensor[]): Buffer {
  const entries: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let at = 0;
  for (const t of tensors) {
    entries[t.name] = { dtype: 'BF16', shape: t.shape, data_offsets: [at, at + tensorBytes(t)] };
    at += tensorBytes(t);
  }
  const json = Buffer.from(JSON.stringify(entries));
  // Padded with spaces so the data starts 8-byte aligned, as the reference writer does.
  const padded = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, ' ')]);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(padded.length));
  return Buffer.concat([length, padded]);
}

export function makeModel(o: MakeModelOptions): MadeModel {
  if (!Number.isSafeInteger(o.layers) || o.layers < 1) throw new Error('layers must be a whole number ≥ 1');
  if (!Number.isSafeInteger(o.shards) || o.shards < 1) throw new Error('shards must be a whole number ≥ 1');
  const { hidden, vocab, tensors } = size(o.bytes, o.layers);
  const groups = split(tensors, o.shards);
  mkdirSync(o.out, { recursive: true });
  const digest = createHash('sha256')
    .update(`torus model fixture ${o.seed ?? 'seed'}`)
    .digest();
  const state = new Uint32Array(digest.buffer.slice(digest.byteOffset, digest.byteOffset + 16));
  if (state.every((v) => v === 0)) state[0] = 1;
  const block = Buffer.alloc(BLOCK);
  const words = new Uint32Array(block.buffer, block.byteOffset, BLOCK / 4);
  const names =
    groups.length === 1
      ? ['model.safetensors']
      : groups.map(
          (_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(groups.length).padStart(5, '0')}.safetensors`,
        );
  const weightMap: Record<string, string> = {};
  let written = 0;
  groups.forEach((group, i) => {
    const fd = openSync(join(o.out, names[i]!), 'w');
    try {
      writeSync(fd, header(group));
      let left = group.reduce((a, t) => a + tensorBytes(t), 0);
      while (left > 0) {
        const n = Math.min(left, BLOCK);
        fillRandom(words, state);
        writeSync(fd, block, 0, n);
        left -= n;
      }
    } finally {
      closeSync(fd);
    }
    for (const t of group) {
      weightMap[t.name] = names[i]!;
      written += tensorBytes(t);
    }
  });
  const heads = hidden / HEAD_DIM;
  const config = {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    hidden_size: hidden,
    intermediate_size: Math.ceil((hidden * 8) / 3 / 64) * 64,
    num_hidden_layers: o.layers,
    num_attention_heads: heads,
    num_key_value_heads: kvHeadsOf(heads),
    head_dim: HEAD_DIM,
    vocab_size: vocab,
    max_position_embeddings: 4096,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    hidden_act: 'silu',
    tie_word_embeddings: false,
    torch_dtype: 'bfloat16',
  };
  writeFileSync(join(o.out, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  if (groups.length > 1)
    writeFileSync(
      join(o.out, 'model.safetensors.index.json'),
      `${JSON.stringify({ metadata: { total_size: written }, weight_map: weightMap }, null, 2)}\n`,
    );
  return { bytes: written, tensors: tensors.length, files: names, hiddenSize: hidden, vocab };
}
