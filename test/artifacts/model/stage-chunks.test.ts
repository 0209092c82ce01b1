import t from 'tap';
import { chunksBytes, stageChunks } from '../../../src/artifacts/model/stage-chunks.js';
import type { Manifest } from '../../../src/artifacts/manifest.js';
import type { ModelRecord, ModelTensorTuple } from '../../../src/protocols/model-record.js';

const K = 64 * 1024;
const H = 'a'.repeat(64);
const file = (path: string, size: number) => ({
  path,
  size,
  mode: 0o644,
  chunks: new Array<string>(Math.ceil(size / K)).fill(H),
});

// Chunk numbers, worked by hand: README.md is chunk 0, config.json 1, model.safetensors 2..8 (its chunk c is 2 + c),
// tokenizer.json 9 and 10.
const WEIGHTS = 393_226; // 6 full chunks and 10 bytes: 7 chunks
const manifest: Manifest = {
  version: 1,
  chunkSize: K,
  files: [
    file('README.md', 5000),
    file('config.json', 100),
    file('model.safetensors', WEIGHTS),
    file('tokenizer.json', 70_000),
  ],
};
const tensors: ModelTensorTuple[] = [
  ['model.embed_tokens.weight', 0, 'BF16', [32_768], 100, 65_636, 'embed'], // file chunks 0, 1
  ['model.layers.0.w', 0, 'BF16', [32_718], 65_636, 131_072, 0], // ends exactly at the end of chunk 1
  ['model.layers.1.w', 0, 'BF16', [32_768], 131_072, 196_608, 1], // exactly chunk 2
  ['model.layers.1.empty', 0, 'BF16', [0], 196_608, 196_608, 1], // no bytes: no chunk
  ['model.layers.2.w', 0, 'BF16', [65_536], 196_608, 327_680, 2], // chunks 3, 4
  ['model.norm.weight', 0, 'BF16', [5], 327_680, 327_690, 'norm'], // chunk 5
  ['lm_head.weight', 0, 'BF16', [32_763], 327_690, 393_216, 'head'], // chunk 5
  ['rotary.inv_freq', 0, 'BF16', [5], 393_216, WEIGHTS, 'all'], // chunk 6 (10 bytes)
];
const model: ModelRecord = {
  format: 'safetensors',
  architecture: 'LlamaForCausalLM',
  layers: 3,
  hiddenSize: 8,
  kvHeads: 1,
  dtype: 'BF16',
  files: [{ path: 'model.safetensors', bytes: WEIGHTS, dataStart: 100 }],
  tensors,
};

t.test('a stage gets the chunks of its tensors, the shared ones and the loader files, nothing else', async (t) => {
  t.same(stageChunks(manifest, model, { fromLayer: 0, toLayer: 1 }), [1, 2, 3, 8, 9, 10], 'first: embed, block 0, all');
  t.same(
    stageChunks(manifest, model, { fromLayer: 1, toLayer: 2 }),
    [1, 4, 8, 9, 10],
    'a block on a chunk boundary pulls no neighbour',
  );
  t.same(
    stageChunks(manifest, model, { fromLayer: 2, toLayer: 3 }),
    [1, 5, 6, 7, 8, 9, 10],
    'last: block 2, norm, head',
  );
  t.same(
    stageChunks(manifest, model, { fromLayer: 0, toLayer: 3 }),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    'one stage: all but README',
  );
  t.same(chunksBytes(manifest, [1, 8, 9, 10]), 100 + 10 + 70_000, 'bytes of short last chunks counted exactly');
});

t.test('tied embeddings: the last stage needs the embedding chunks too', async (t) => {
  const tied: ModelRecord = {
    ...model,
    tiedEmbeddings: true,
    tensors: tensors.filter(([n]) => n !== 'lm_head.weight'),
  };
  t.same(stageChunks(manifest, tied, { fromLayer: 2, toLayer: 3 }), [1, 2, 3, 5, 6, 7, 8, 9, 10]);
  t.same(stageChunks(manifest, tied, { fromLayer: 1, toLayer: 2 }), [1, 4, 8, 9, 10], 'a middle stage does not');
});

t.test('a record that does not match the manifest is refused', async (t) => {
  const wrong: ModelRecord = { ...model, files: [{ path: 'model.safetensors', bytes: WEIGHTS + 1, dataStart: 100 }] };
  t.throws(() => stageChunks(manifest, wrong, { fromLayer: 0, toLayer: 1 }), { code: 'TORUS_MODEL_INVALID' });
  const missing: ModelRecord = { ...model, files: [{ path: 'other.safetensors', bytes: WEIGHTS, dataStart: 100 }] };
  t.throws(() => stageChunks(manifest, missing, { fromLayer: 0, toLayer: 1 }), /other\.safetensors/);
});
