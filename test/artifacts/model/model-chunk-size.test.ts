import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import { MAX_OVER_FETCH, modelChunkSize, worstOverFetch } from '../../../src/artifacts/model/model-chunk-size.js';
import { ArtifactStore } from '../../../src/artifacts/store.js';
import type { ModelRecord, ModelTensorTuple } from '../../../src/protocols/model-record.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/** A record whose layers hold these bytes (one tensor each, in one file), plus an embedding of `embed` bytes. */
function record(layerBytes: number[], embed = 0): ModelRecord {
  const tensors: ModelTensorTuple[] = [];
  let at = 8;
  if (embed > 0) {
    tensors.push(['model.embed_tokens.weight', 0, 'BF16', [embed / 2], at, at + embed, 'embed']);
    at += embed;
  }
  layerBytes.forEach((b, i) => {
    tensors.push([`model.layers.${i}.w`, 0, 'BF16', [b / 2], at, at + b, i]);
    at += b;
  });
  return {
    format: 'safetensors',
    architecture: 'LlamaForCausalLM',
    layers: layerBytes.length,
    hiddenSize: 64,
    kvHeads: 1,
    dtype: 'BF16',
    files: [{ path: 'model.safetensors', bytes: at, dataStart: 8 }],
    tensors,
  };
}
const files = (m: ModelRecord) => [{ path: 'model.safetensors', size: m.files[0]!.bytes }];

t.test(
  'the largest power of two, 64 KiB to 4 MiB, whose worst stage carries at most 1 % more than its tensors',
  async (t) => {
    const mid = record([200 * MiB, 100 * MiB, 300 * MiB]);
    t.equal(modelChunkSize(mid, files(mid)), MiB, 'the 100 MiB layer alone: its edges cost one chunk, 1 MiB = 1 %');
    t.ok(worstOverFetch(mid, MiB) <= MAX_OVER_FETCH && worstOverFetch(mid, 2 * MiB) > MAX_OVER_FETCH);
    const exact = record([64 * MiB, 64 * MiB]);
    t.equal(
      modelChunkSize(exact, files(exact)),
      512 * KiB,
      'layers of 64 MiB: 512 KiB (0.78 %), where 1/256 of a layer gave 256 KiB',
    );
    t.ok(worstOverFetch(exact, 512 * KiB) <= MAX_OVER_FETCH, 'every stage within 1 %');
    t.ok(worstOverFetch(exact, MiB) > MAX_OVER_FETCH, '1 MiB would carry 1.56 % more on a one-layer stage');
    const big = record([4 * GiB, 4 * GiB]);
    t.equal(modelChunkSize(big, files(big)), 4 * MiB, 'never above the 4 MiB default');
    const tiny = record([1 * MiB, 2 * MiB], 8 * MiB);
    t.equal(
      modelChunkSize(tiny, files(tiny)),
      64 * KiB,
      'never below the 64 KiB minimum (nothing meets 1 %: the floor)',
    );
    const none: ModelRecord = {
      ...tiny,
      tensors: tiny.tensors.map(([n, f, d, sh, b, e]): ModelTensorTuple => [n, f, d, sh, b, e, 'all']),
    };
    t.equal(modelChunkSize(none, files(none)), 4 * MiB, 'no layer to size by: the default');
  },
);

t.test('the worst over-fetch is over every contiguous stage, with what the first and last stages take', async (t) => {
  // An embedding of 1 MiB ahead of two layers of 64 MiB: the first stage takes it, so its chunks are counted there.
  const m = record([64 * MiB, 64 * MiB], MiB);
  const cs = modelChunkSize(m, files(m));
  t.ok(worstOverFetch(m, cs) <= MAX_OVER_FETCH, `${cs / KiB} KiB keeps every stage within 1 %`);
  t.ok(cs >= 256 * KiB, 'never below the 1/256-of-a-layer rule');
});

t.test('doubled while the manifest would pass its bounds (1 048 576 chunks, 32 MiB of JSON)', async (t) => {
  // 100 layers of 2 MiB would make 64 KiB chunks; 200 GiB in such chunks is 3.3 million of them, 220 MB of manifest.
  const m = record(new Array<number>(100).fill(2 * MiB));
  const huge = [{ path: 'model.safetensors', size: 200 * GiB }];
  t.equal(modelChunkSize(m, huge), 512 * KiB, '409 600 chunks, 27 MB of manifest; 256 KiB would be 55 MB');
});

t.test("artifacts add sizes a model's chunks by its layers unless a size is given", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'torus-chunksize-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  makeModel({ out: join(dir, 'm'), bytes: 48 * MiB, layers: 4, shards: 2, seed: 'cs' });
  const store = new ArtifactStore(join(dir, 'store'));
  const added = await store.add(join(dir, 'm'));
  t.equal(
    added.chunkSize,
    modelChunkSize(added.model!, [...added.model!.files.map((f) => ({ path: f.path, size: f.bytes }))]),
  );
  t.equal(added.chunkSize, 64 * KiB, 'a layer of ~9 MiB: 64 KiB chunks');
  t.equal(store.manifest(added.id)!.manifest.chunkSize, 64 * KiB);
  const given = await new ArtifactStore(join(dir, 'store2')).add(join(dir, 'm'), { chunkSize: MiB });
  t.equal(given.chunkSize, MiB, '--chunk-size wins');
  const plain = await new ArtifactStore(join(dir, 'store3')).add(join(dir, 'm', 'config.json'));
  t.equal(plain.chunkSize, 4 * MiB, 'a plain file: the default');
});
