import t from 'tap';
import { layerOf } from '../../../src/artifacts/model/layer-names.js';

t.test('blocks, embeddings, final norm and head in the common naming styles', async (t) => {
  const cases: [string, ReturnType<typeof layerOf>][] = [
    // Llama, Mistral, Qwen
    ['model.embed_tokens.weight', 'embed'],
    ['model.layers.0.self_attn.q_proj.weight', 0],
    ['model.layers.31.mlp.down_proj.weight', 31],
    ['model.norm.weight', 'norm'],
    ['lm_head.weight', 'head'],
    // GPT-2 as transformers writes it, and the original checkpoint
    ['transformer.wte.weight', 'embed'],
    ['transformer.wpe.weight', 'embed'],
    ['transformer.h.11.attn.c_attn.weight', 11],
    ['h.3.mlp.c_fc.bias', 3],
    ['transformer.ln_f.weight', 'norm'],
    ['wte.weight', 'embed'],
    // Meta's Llama checkpoints
    ['tok_embeddings.weight', 'embed'],
    ['layers.7.attention.wq.weight', 7],
    ['norm.weight', 'norm'],
    ['output.weight', 'head'],
    // OPT
    ['model.decoder.embed_tokens.weight', 'embed'],
    ['model.decoder.embed_positions.weight', 'embed'],
    ['model.decoder.layers.5.fc1.weight', 5],
    ['model.decoder.final_layer_norm.weight', 'norm'],
    // GPT-NeoX, MPT, Mamba, Bloom
    ['gpt_neox.embed_in.weight', 'embed'],
    ['gpt_neox.layers.2.attention.dense.weight', 2],
    ['gpt_neox.final_layer_norm.weight', 'norm'],
    ['embed_out.weight', 'head'],
    ['transformer.blocks.4.ffn.up_proj.weight', 4],
    ['blocks.6.attn.weight', 6],
    ['backbone.layers.1.mixer.in_proj.weight', 1],
    ['backbone.norm_f.weight', 'norm'],
    ['transformer.word_embeddings.weight', 'embed'],
    // multimodal wrappers keep the text model one level down
    ['model.language_model.layers.9.mlp.up_proj.weight', 9],
    ['language_model.model.layers.9.mlp.up_proj.weight', 9],
  ];
  for (const [name, layer] of cases) t.equal(layerOf(name, 32), layer, name);
});

t.test('what cannot be given to one stage is needed by every stage', async (t) => {
  // a vision tower's blocks are not the text model's layers
  t.equal(layerOf('model.vision_tower.encoder.layers.3.mlp.fc1.weight', 32), 'all');
  t.equal(layerOf('model.rotary_emb.inv_freq', 32), 'all');
  t.equal(layerOf('something.else', 32), 'all');
  // a block past the config's layer count (DeepSeek's multi-token-prediction block is layer N)
  t.equal(layerOf('model.layers.32.eh_proj.weight', 32), 'all');
  t.equal(layerOf('model.layers.31.eh_proj.weight', 32), 31);
  // no prefix match inside another name
  t.equal(layerOf('model.layers_extra.3.x', 32), 'all');
  t.equal(layerOf('xmodel.layers.3.x', 32), 'all');
});
