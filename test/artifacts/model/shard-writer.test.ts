import t from 'tap';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import { readModelDir } from '../../../src/artifacts/model/model-reader.js';
import { stageTensors, writeShardDirectory } from '../../../src/artifacts/model/shard-writer.js';
import type { ModelRecord } from '../../../src/protocols/model-record.js';

const READER = fileURLToPath(new URL('./fixtures/read_shard.py', import.meta.url));

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'torus-shard-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function sourceHash(dir: string, model: ModelRecord, name: string): string {
  const [, file, , , begin, end] = model.tensors.find((x) => x[0] === name)!;
  const fd = openSync(join(dir, model.files[file]!.path), 'r');
  const buf = Buffer.alloc(end - begin);
  readSync(fd, buf, 0, buf.length, begin);
  closeSync(fd);
  return createHash('sha256').update(buf).digest('hex');
}

interface Read {
  readonly file: string;
  readonly dtype: string;
  readonly shape: number[];
  readonly sha256: string;
}

t.test('a stage shard, read back by an independent reader, holds exactly its tensors, bytes identical', async (t) => {
  const dir = scratch(t);
  const src = join(dir, 'model');
  makeModel({ out: src, bytes: 6 * 2 ** 20, layers: 6, shards: 3, seed: 'shard' });
  const model = (await readModelDir(src))!.model!;
  const stages = [
    { fromLayer: 0, toLayer: 2 },
    { fromLayer: 2, toLayer: 4 },
    { fromLayer: 4, toLayer: 6 },
  ];
  const seen = new Set<string>();
  for (const [i, stage] of stages.entries()) {
    const names = stageTensors(model, stage);
    const out = join(dir, `stage-${i}`);
    const written = await writeShardDirectory(model, names, src, out);
    const read = JSON.parse(execFileSync('python3', [READER, out], { encoding: 'utf8' })) as Record<string, Read>;
    t.same(Object.keys(read).sort(), [...names].sort(), `stage ${i}: exactly its tensors`);
    for (const name of names) {
      const [, , dtype, shape] = model.tensors.find((x) => x[0] === name)!;
      t.same(
        { dtype: read[name]!.dtype, shape: read[name]!.shape, sha256: read[name]!.sha256 },
        { dtype, shape, sha256: sourceHash(src, model, name) },
        `stage ${i}: ${name}`,
      );
      seen.add(name);
    }
    t.same(
      JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')),
      JSON.parse(readFileSync(join(src, 'config.json'), 'utf8')),
    );
    t.equal(
      written.bytes,
      names.reduce((a, n) => {
        const x = model.tensors.find((y) => y[0] === n)!;
        return a + x[5] - x[4];
      }, 0),
    );
    t.notOk(
      readdirSync(dir).some((f) => f.startsWith('.shard-')),
      'no staging directory left',
    );
  }
  t.ok(stageTensors(model, stages[0]!).includes('model.embed_tokens.weight'), 'the first stage has the embeddings');
  t.notOk(
    stageTensors(model, stages[1]!).some((n) => !/^model\.layers\.[23]\./.test(n)),
    'a middle stage: its blocks only',
  );
  t.ok(stageTensors(model, stages[2]!).includes('lm_head.weight'), 'the last stage has the head');
  t.ok(stageTensors(model, stages[2]!).includes('model.norm.weight'), 'and the final norm');
  t.equal(seen.size, model.tensors.length, 'together the stages hold every tensor once');
});

t.test('tensors every stage needs, tied embeddings, unknown names, an existing directory', async (t) => {
  const dir = scratch(t);
  const src = join(dir, 'model');
  makeModel({ out: src, bytes: 2 ** 20, layers: 2, shards: 1 });
  const base = (await readModelDir(src))!.model!;
  // mark one block tensor `all` and tie the embeddings: every stage gets the first, the last stage the second
  const model: ModelRecord = {
    ...base,
    tiedEmbeddings: true,
    tensors: base.tensors.map((x) =>
      x[0] === 'model.layers.1.input_layernorm.weight' ? [...x.slice(0, 6), 'all'] : x,
    ) as ModelRecord['tensors'],
  };
  const first = stageTensors(model, { fromLayer: 0, toLayer: 1 });
  const last = stageTensors(model, { fromLayer: 1, toLayer: 2 });
  t.ok(first.includes('model.layers.1.input_layernorm.weight'));
  t.ok(last.includes('model.layers.1.input_layernorm.weight'));
  t.ok(last.includes('model.embed_tokens.weight'), 'tied: the head is the embedding matrix');
  await t.rejects(writeShardDirectory(model, ['nope'], src, join(dir, 'x')), /not tensors of this model: nope/);
  await writeShardDirectory(model, first, src, join(dir, 'y'));
  await t.rejects(writeShardDirectory(model, first, src, join(dir, 'y')), /exists already/);
  const read = JSON.parse(execFileSync('python3', [READER, join(dir, 'y')], { encoding: 'utf8' }));
  t.same(Object.keys(read).sort(), [...first].sort());
});
