import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import { readModelDir } from '../../../src/artifacts/model/model-reader.js';
import { ArtifactStore } from '../../../src/artifacts/store.js';
import { readModelFile } from '../../../src/artifacts/model/model-store.js';
import { TorusError } from '../../../src/protocols/errors.js';

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'torus-model-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('the fixture: a Llama-style model of about the asked size in several shards, at disk speed', async (t) => {
  const dir = scratch(t);
  const started = Date.now();
  const made = makeModel({ out: join(dir, 'm'), bytes: 64 * 2 ** 20, layers: 6, shards: 3, seed: 'a' });
  t.ok(Date.now() - started < 10_000, 'seconds, not minutes');
  t.ok(made.bytes <= 64 * 2 ** 20 && made.bytes > 0.9 * 64 * 2 ** 20, `${made.bytes} bytes: within 10 % under 64 MiB`);
  t.same(made.files, [
    'model-00001-of-00003.safetensors',
    'model-00002-of-00003.safetensors',
    'model-00003-of-00003.safetensors',
  ]);
  const config = JSON.parse(readFileSync(join(dir, 'm/config.json'), 'utf8'));
  t.equal(config.num_hidden_layers, 6);
  t.same(config.architectures, ['LlamaForCausalLM']);
  const index = JSON.parse(readFileSync(join(dir, 'm/model.safetensors.index.json'), 'utf8'));
  t.equal(Object.keys(index.weight_map).length, made.tensors);
  // deterministic for one seed, different for another
  makeModel({ out: join(dir, 'same'), bytes: 2 ** 20, layers: 2, shards: 1, seed: 's' });
  makeModel({ out: join(dir, 'again'), bytes: 2 ** 20, layers: 2, shards: 1, seed: 's' });
  makeModel({ out: join(dir, 'other'), bytes: 2 ** 20, layers: 2, shards: 1, seed: 't' });
  const bytes = (d: string) => readFileSync(join(dir, d, 'model.safetensors'));
  t.ok(bytes('same').equals(bytes('again')));
  t.notOk(bytes('same').equals(bytes('other')));
});

t.test('a model directory is read into its record: sizes, every tensor with file, byte range and layer', async (t) => {
  const dir = scratch(t);
  const made = makeModel({ out: dir, bytes: 8 * 2 ** 20, layers: 4, shards: 3 });
  const reading = await readModelDir(dir);
  const m = reading?.model;
  if (!m) return t.fail('no record');
  t.match(m, {
    format: 'safetensors',
    architecture: 'LlamaForCausalLM',
    modelType: 'llama',
    layers: 4,
    hiddenSize: made.hiddenSize,
    kvHeads: made.hiddenSize / 64 / 4,
    attentionHeads: made.hiddenSize / 64,
    dtype: 'BF16',
    tiedEmbeddings: false,
  });
  t.same(
    m.files.map((f) => f.path),
    made.files,
  );
  t.equal(m.tensors.length, made.tensors);
  const byName = new Map(m.tensors.map((x) => [x[0], x]));
  t.equal(byName.get('model.embed_tokens.weight')?.[6], 'embed');
  t.equal(byName.get('model.layers.3.mlp.up_proj.weight')?.[6], 3);
  t.equal(byName.get('model.norm.weight')?.[6], 'norm');
  t.equal(byName.get('lm_head.weight')?.[6], 'head');
  // every range is where the file says: the bytes of each file are exactly its header plus its tensors
  for (const [i, f] of m.files.entries()) {
    const mine = m.tensors.filter((x) => x[1] === i).sort((a, b) => a[4] - b[4]);
    t.equal(mine[0]?.[4], f.dataStart, `${f.path}: the first tensor starts after the header`);
    t.equal(mine.at(-1)?.[5], f.bytes, `${f.path}: the last tensor ends the file`);
  }
  t.equal(
    m.tensors.reduce((a, x) => a + x[5] - x[4], 0),
    made.bytes,
  );
  // one file, no index
  const single = scratch(t);
  makeModel({ out: single, bytes: 2 ** 20, layers: 2, shards: 1 });
  const one = (await readModelDir(single))?.model;
  t.same(
    one?.files.map((f) => f.path),
    ['model.safetensors'],
  );
  // not a model: no config.json, or no weights in this layout
  const plain = scratch(t);
  writeFileSync(join(plain, 'config.json'), '{}');
  t.equal(await readModelDir(plain), undefined);
});

async function refusal(dir: string): Promise<TorusError> {
  const e = await readModelDir(dir).then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!(e instanceof TorusError)) throw new Error(`expected a refusal, got ${String(e)}`);
  return e;
}

t.test('a malformed config, index or header is a clear error naming the file and byte', async (t) => {
  const fresh = (): string => {
    const dir = scratch(t);
    makeModel({ out: dir, bytes: 2 ** 20, layers: 2, shards: 2 });
    return dir;
  };
  let dir = fresh();
  writeFileSync(join(dir, 'config.json'), '{"num_hidden_layers": 2,, }');
  t.match((await refusal(dir)).message, /^config\.json: byte 24: not JSON/);

  dir = fresh();
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, num_hidden_layers: 'two' }));
  t.match(
    (await refusal(dir)).message,
    /^config\.json: byte 0: layer count \(num_hidden_layers.*\) must be a whole number ≥ 1, got "two"/,
  );

  dir = fresh();
  writeFileSync(join(dir, 'model.safetensors.index.json'), '{"weight_map": {"a": "../etc/passwd"}}');
  t.match(
    (await refusal(dir)).message,
    /^model\.safetensors\.index\.json: byte 0: weight_map\["a"\] is not a safetensors file name/,
  );

  dir = fresh();
  const index = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8'));
  index.weight_map['model.norm.weight'] = 'model-00001-of-00002.safetensors';
  writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify(index));
  t.match(
    (await refusal(dir)).message,
    /tensor "model\.norm\.weight" is in model-00002-of-00002\.safetensors, but weight_map puts it in model-00001/,
  );

  dir = fresh();
  index.weight_map['model.norm.weight'] = 'model-00002-of-00002.safetensors';
  index.weight_map['ghost.weight'] = 'model-00002-of-00002.safetensors';
  writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify(index));
  t.match((await refusal(dir)).message, /tensor "ghost\.weight" is in weight_map but in no file's header/);

  dir = fresh();
  const shard = join(dir, 'model-00002-of-00002.safetensors');
  const bytes = readFileSync(shard);
  writeFileSync(shard, bytes.subarray(0, bytes.length - 2)); // the last tensor cut short
  const e = await refusal(dir);
  t.match(
    e.message,
    /^model-00002-of-00002\.safetensors: byte \d+: the tensors end at byte \d+, past the end of the file/,
  );
  t.equal(e.code, 'TORUS_MODEL_INVALID');
});

t.test('a model whose record is over the state bound is added as a plain artifact, and add says why', async (t) => {
  const dir = scratch(t);
  const src = join(dir, 'wide');
  makeModel({ out: src, bytes: 2 ** 20, layers: 2, shards: 1 });
  // 12 000 one-byte tensors with long names: a valid file, but a record of well over 1 MiB
  const header: Record<string, unknown> = {};
  for (let i = 0; i < 12_000; i++)
    header[`model.layers.0.mlp.experts.${i}.a_rather_long_projection_name_for_this_expert.weight`] = {
      dtype: 'U8',
      shape: [1],
      data_offsets: [i, i + 1],
    };
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  writeFileSync(join(src, 'model.safetensors'), Buffer.concat([length, json, Buffer.alloc(12_000)]));
  const reading = await readModelDir(src);
  t.equal(reading?.model, undefined);
  t.match(
    reading?.note,
    /^its record \(12000 tensors\) takes \d+ bytes, over the replicated state's 1048576-byte bound/,
  );
  const store = new ArtifactStore(join(dir, 'store'));
  const added = await store.add(src);
  t.equal(added.model, undefined);
  t.match(added.modelNote, /over the replicated state's 1048576-byte bound/);
  t.equal(added.files, 2, 'the files are stored all the same');
  // and a model within the bound is kept beside the manifest
  const small = join(dir, 'small');
  makeModel({ out: small, bytes: 2 ** 20, layers: 2, shards: 1 });
  const kept = await store.add(small);
  t.same(readModelFile(store.paths(kept.id).dir), kept.model);
  t.ok(kept.model);
});
