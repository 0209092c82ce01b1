/**
 * Which layer a tensor belongs to, from its name (docs/artifacts.md, "Models"): a transformer block's tensors
 * carry its index (`model.layers.7.mlp.up_proj.weight`, GPT-2's `transformer.h.7.attn.c_attn.weight`, …); the
 * embeddings go with the first stage, the final norm and the output head with the last. Anything else, and a
 * block index outside the config's layer count (e.g. a multi-token-prediction block), cannot be given to one
 * stage: it is `all`, needed by every stage.
 */
import type { TensorLayer } from '../../protocols/model-record.js';

/** Where the blocks live in the common layouts: Llama/Mistral/Qwen, OPT, GPT-2, GPT-NeoX, MPT, Mamba, multimodal. */
const ROOT =
  '(?:model\\.|model\\.decoder\\.|model\\.language_model\\.|language_model\\.model\\.|transformer\\.|gpt_neox\\.|backbone\\.)?';
const BLOCK = new RegExp(`^${ROOT}(?:layers|h|blocks)\\.(\\d{1,6})\\.`);
const EMBED = new RegExp(
  `^${ROOT}(?:embed_tokens|embed_positions|tok_embeddings|wte|wpe|embed_in|word_embeddings|word_embeddings_layernorm|embeddings)\\.`,
);
const NORM = new RegExp(`^${ROOT}(?:norm|ln_f|final_layer_norm|norm_f|final_layernorm)\\.`);
const HEAD = /^(?:lm_head|output|embed_out|model\.lm_head|language_model\.lm_head)\./;

export function layerOf(name: string, layers: number): TensorLayer {
  const block = BLOCK.exec(name);
  if (block) {
    const n = Number(block[1]);
    return n < layers ? n : 'all';
  }
  if (EMBED.test(name)) return 'embed';
  if (NORM.test(name)) return 'norm';
  if (HEAD.test(name)) return 'head';
  return 'all';
}
