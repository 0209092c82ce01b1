/**
 * Placement from a model's record (docs/placement.md, "A model workload"): the layer split and the memory check
 * weigh each pipeline stage by the real bytes of its tensors (embeddings on the first stage, norm and head on the
 * last, `all` on every one), the same bytes `stageTensors()` gives the per-stage transfer; with equal blocks and
 * nothing outside them the plans are those of the hand-given sizes. The model's fields resolve against the
 * record: a contradiction is a 400 naming both, an unknown artifact 404, one that is not a model 409.
 */
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodePlacementInput } from '../../../../src/actors/placement-planner/search/placement-input.js';
import {
  splitLayersByBytes,
  splitLayersByMemory,
} from '../../../../src/actors/placement-planner/search/layer-split.js';
import {
  modelBytesOf,
  resolveModelWorkload,
  type ModelSizedFields,
  stageBytes,
  weightBytes,
} from '../../../../src/actors/placement-planner/search/model-workload.js';
import { decodePlacementRequest } from '../../../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal, type Plan, type PlanResult } from '../../../../src/actors/placement-planner/search/plan-result.js';
import { previewPlacements } from '../../../../src/actors/placement-planner/search/previews.js';
import { runPlanCommand } from '../../../../src/cli/plan.js';
import { readModelDir } from '../../../../src/artifacts/model/model-reader.js';
import { stageTensors } from '../../../../src/artifacts/model/shard-writer.js';
import type { ClusterState } from '../../../../src/actors/topology-keeper/state.js';
import { TorusError } from '../../../../src/protocols/errors.js';
import type { ModelRecord, ModelTensorTuple } from '../../../../src/protocols/model-record.js';
import { makeModel } from '../../../../benchmarks/model-fixture/make-model.js';
import { both, GB, makeState, type StateJson } from '../../../fixtures/placement/build-state.js';

/** A record whose tensors have these byte sizes, laid end to end in one file. */
function record(
  tensors: readonly (readonly [string, number, ModelTensorTuple[6]])[],
  layers: number,
  extra: Partial<ModelRecord> = {},
): ModelRecord {
  let at = 8;
  const tuples = tensors.map(([name, bytes, layer]): ModelTensorTuple => {
    const t: ModelTensorTuple = [name, 0, 'U8', [bytes], at, at + bytes, layer];
    at += bytes;
    return t;
  });
  return {
    format: 'safetensors',
    architecture: 'LlamaForCausalLM',
    layers,
    hiddenSize: 64,
    kvHeads: 2,
    dtype: 'U8',
    files: [{ path: 'model.safetensors', bytes: at, dataStart: 8 }],
    tensors: tuples,
    ...extra,
  };
}
const blocks = (layers: number, bytes: number) =>
  Array.from({ length: layers }, (_, l) => [`model.layers.${l}.mlp.weight`, bytes, l] as const);

const plan = (state: StateJson, req: Record<string, unknown>, seed = 7): PlanResult =>
  planPlacement(decodePlacementInput(state), decodePlacementRequest(req), { seed });
const mustPlan = (t: Test, result: PlanResult): Plan => {
  if (isRefusal(result)) t.fail(`unexpected refusal: ${result.refusal.message}`);
  return result as Plan;
};
const counts = (p: Plan): number[] => p.instance.shards.map((s) => s.endLayer - s.startLayer);

/** Four nodes of equal memory in a ring a-b-c-d (and only that ring). */
function ringOfFour(mem: number): StateJson {
  const s = makeState(['a', 'b', 'c', 'd'].map((id) => ({ id, mem })));
  both(s, 'a', 'b', 'ethernet');
  both(s, 'b', 'c', 'ethernet');
  both(s, 'c', 'd', 'ethernet');
  both(s, 'd', 'a', 'ethernet');
  return s;
}

t.test('the split by bytes, hand-worked', async (t) => {
  // 12 blocks of 5 (60 %), embeddings 20 on the first stage, head 20 on the last; 4 equal nodes: 25 bytes each.
  // Cuts at 25, 50, 75 bytes = layer positions 1, 6, 11: the first and last stage get 1 block, the middle 5.
  t.same(
    splitLayersByBytes({ layerBytes: new Array(12).fill(5), leading: 20, trailing: 20 }, [1, 1, 1, 1]),
    [1, 5, 5, 1],
  );
  // 10 blocks of 6, embeddings 30, head 10; 2 equal nodes: the cut at 50 bytes is position 3.33, so 3.33 + 6.67
  // blocks, rounded by largest remainder to 3 + 7: stages of 30+18 = 48 and 42+10 = 52 bytes.
  t.same(splitLayersByBytes({ layerBytes: new Array(10).fill(6), leading: 30, trailing: 10 }, [8, 8]), [3, 7]);
  // Uneven blocks: the heavy ones count for more (blocks 0-1 weigh 30 each, 2-5 weigh 10): the cut at 50 bytes is
  // position 1.67, so 1.67 + 4.33 blocks, rounded to 2 + 4 (60 and 40 bytes; 1 + 5 would be 30 and 70).
  t.same(splitLayersByBytes({ layerBytes: [30, 30, 10, 10, 10, 10], leading: 0, trailing: 0 }, [1, 1]), [2, 4]);
  // Equal blocks and nothing outside them: exactly the split by memory, ties included.
  for (const available of [
    [1, 1, 1],
    [500, 500, 1000],
    [900, 50, 50],
    [34, 33, 33],
    [3, 7, 5, 5],
  ])
    for (const layers of [3, 4, 7, 10, 12, 31])
      if (layers >= available.length)
        t.same(
          splitLayersByBytes({ layerBytes: new Array(layers).fill(1000), leading: 0, trailing: 0 }, available),
          splitLayersByMemory(layers, available),
          `${layers} layers over ${available.join('/')}`,
        );
});

t.test("a stage's bytes are the bytes of stageTensors() for that stage", async (t) => {
  const bytesOf = (m: ModelRecord, from: number, to: number): number => {
    const names = new Set(stageTensors(m, { fromLayer: from, toLayer: to }));
    return m.tensors.filter(([n]) => names.has(n)).reduce((s, x) => s + x[5] - x[4], 0);
  };
  const check = (m: ModelRecord, what: string): void => {
    const mb = modelBytesOf(m);
    let stages = 0;
    for (let from = 0; from < m.layers; from++)
      for (let to = from + 1; to <= m.layers; to++) {
        if (stageBytes(mb, from, to) !== bytesOf(m, from, to)) t.fail(`${what}: layers ${from}-${to}`);
        stages++;
      }
    t.pass(`${what}: ${stages} stages agree`);
    t.equal(
      weightBytes(mb),
      m.tensors.reduce((s, x) => s + x[5] - x[4], 0),
      `${what}: the weights once`,
    );
  };
  const hand = (tied: boolean) =>
    record(
      [
        ['model.embed_tokens.weight', 400, 'embed'],
        ...blocks(5, 100),
        ['model.layers.2.extra.weight', 7, 2],
        ['model.rotary_emb.inv_freq', 3, 'all'],
        ['model.norm.weight', 11, 'norm'],
        ...(tied ? [] : [['lm_head.weight', 400, 'head'] as const]),
      ],
      5,
      { tiedEmbeddings: tied },
    );
  check(hand(false), 'untied, with an `all` tensor');
  check(hand(true), 'tied embeddings');
  const dir = mkdtempSync(join(tmpdir(), 'torus-model-place-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  makeModel({ out: join(dir, 'm'), bytes: 2 ** 20, layers: 6, shards: 2 });
  const read = await readModelDir(join(dir, 'm'));
  if (!read?.model) return t.fail('makeModel wrote no model');
  check(read.model, 'a model directory written by makeModel');
});

t.test(
  'a model whose embeddings and head are 40 % of its bytes: the first and last stage get fewer layers',
  async (t) => {
    // 12 blocks of 5 GB (60 GB), embeddings 20 GB, head 20 GB; 4 nodes of 30 GB: 100 GB in all.
    const m = record(
      [['model.embed_tokens.weight', 20 * GB, 'embed'], ...blocks(12, 5 * GB), ['lm_head.weight', 20 * GB, 'head']],
      12,
    );
    const mb = modelBytesOf(m);
    const p = mustPlan(
      t,
      plan(ringOfFour(30 * GB), {
        workload: { id: 'w', memoryBytes: weightBytes(mb), layers: 12, modelBytes: mb },
        sharding: 'pipeline',
        backend: 'ring',
        minNodes: 4,
      }),
    );
    t.same(counts(p), [1, 5, 5, 1], 'embeddings + 1 block, 5, 5, 1 block + head: 25 GB per stage');
    t.match(
      p.explanation.chosen?.why.join('\n'),
      /model stages by bytes: \w layers 0-0 \(25\.00 GB \(25000000000 bytes\)\), \w layers 1-5 \(25\.00 GB/,
    );
    // The same sizes given by hand weigh every layer alike: 3 each, and a first stage of 3 × 100/12 GB.
    const even = mustPlan(
      t,
      plan(ringOfFour(30 * GB), {
        workload: { id: 'w', memoryBytes: 100 * GB, layers: 12 },
        sharding: 'pipeline',
        backend: 'ring',
        minNodes: 4,
      }),
    );
    t.same(counts(even), [3, 3, 3, 3]);
  },
);

t.test('a stage is checked by its real bytes: a heavy head does not fit where the even share would', async (t) => {
  // 4 blocks of 10 and a 60-byte head (tied: the last stage holds the 20-byte embeddings again): 120 bytes of
  // weights. Two nodes of 70: the even share (60 each) fits, but any last stage holds at least 10 + 60 + 20.
  const m = record([['model.embed_tokens.weight', 20, 'embed'], ...blocks(4, 10), ['lm_head.weight', 60, 'head']], 4, {
    tiedEmbeddings: true,
  });
  const mb = modelBytesOf(m);
  const s = makeState([
    { id: 'a', mem: 70 },
    { id: 'b', mem: 70 },
  ]);
  both(s, 'a', 'b', 'ethernet');
  const req = (w: Record<string, unknown>) => ({
    workload: { id: 'w', layers: 4, ...w },
    sharding: 'pipeline',
    backend: 'ring',
    minNodes: 2,
  });
  t.notOk(isRefusal(plan(s, req({ memoryBytes: 120 }))), 'the even share fits');
  const refused = plan(s, req({ memoryBytes: 120, modelBytes: mb }));
  if (!isRefusal(refused)) return t.fail('the real bytes must refuse');
  t.match(
    JSON.stringify(refused.refusal),
    /not enough memory on b: its stage \(layers 3-3, 90 bytes of tensors\) needs 90 bytes, 70 bytes available/,
  );
});

t.test(
  'a pinned order of a model is checked by its real stage bytes too: refused with the reason, not thrown',
  async (t) => {
    // The same model on a pinned pair: the planner may not pick a better order, so the refusal names the stage.
    const m = record(
      [['model.embed_tokens.weight', 20, 'embed'], ...blocks(4, 10), ['lm_head.weight', 60, 'head']],
      4,
      {
        tiedEmbeddings: true,
      },
    );
    const s = makeState([
      { id: 'a', mem: 70 },
      { id: 'b', mem: 70 },
    ]);
    both(s, 'a', 'b', 'ethernet');
    const pinned = (nodes: string[]) =>
      plan(s, {
        workload: { id: 'w', layers: 4, memoryBytes: 120, modelBytes: modelBytesOf(m) },
        sharding: 'pipeline',
        backend: 'ring',
        nodes,
      });
    const refused = pinned(['b', 'a']);
    if (!isRefusal(refused)) return t.fail('the real bytes must refuse the pinned pair');
    t.equal(refused.refusal.kind, 'memory');
    t.match(
      refused.refusal.message,
      /The pinned nodes b, a cannot hold w: not enough memory on a: its stage \(layers 3-3/,
    );
    const roomy = makeState([
      { id: 'a', mem: 70 },
      { id: 'b', mem: 100 },
    ]);
    both(roomy, 'a', 'b', 'ethernet');
    const placed = mustPlan(
      t,
      plan(roomy, {
        workload: { id: 'w', layers: 4, memoryBytes: 120, modelBytes: modelBytesOf(m) },
        sharding: 'pipeline',
        backend: 'ring',
        nodes: ['a', 'b'],
      }),
    );
    t.same(placed.instance.nodes, ['a', 'b'], 'the pinned order');
    t.same(
      counts(placed),
      [3, 1],
      "split by the stages' real bytes: the last stage (head and tied embeddings) gets one block",
    );
  },
);

/** Three fast nodes on measured links, with device figures: the plans are chosen by prediction. */
function measuredTriangle(): StateJson {
  const s = makeState([
    { id: 'a', mem: 40 * GB },
    { id: 'b', mem: 30 * GB },
    { id: 'c', mem: 20 * GB },
  ]);
  for (const n of s.nodes) n.device = { memoryBandwidthGBps: 200, gflops: 8000 };
  both(s, 'a', 'b', 'ethernet', { bw: 1e10, rtt: 0.2 });
  both(s, 'b', 'c', 'ethernet', { bw: 5e9, rtt: 0.3 });
  both(s, 'a', 'c', 'ethernet', { bw: 2e9, rtt: 0.5 });
  return s;
}

t.test('a uniform record previews exactly as the same sizes given by hand', async (t) => {
  // Equal blocks and no tensor outside them: the model's bytes carry nothing the hand-given sizes do not.
  const m = record(blocks(10, 5 * GB), 10, { hiddenSize: 4096, kvHeads: 8 });
  const mb = modelBytesOf(m);
  const state = decodePlacementInput(measuredTriangle());
  const hand = { id: 'w', memoryBytes: 50 * GB, layers: 10, hiddenSize: 4096, kvHeads: 8 };
  const resolved = resolveModelWorkload(
    { id: 'w', model: 'ab'.repeat(32) },
    {
      ['ab'.repeat(32)]: { name: 'm', bytes: 50 * GB, chunks: 1, model: m, holders: { a: { have: 1 } } },
    },
  );
  t.same(
    {
      memoryBytes: resolved.memoryBytes,
      layers: resolved.layers,
      hiddenSize: resolved.hiddenSize,
      kvHeads: resolved.kvHeads,
    },
    { memoryBytes: 50 * GB, layers: 10, hiddenSize: 4096, kvHeads: 8 },
    'the record gives the hand-given sizes',
  );
  const byHand = previewPlacements(
    state,
    decodePlacementRequest({ workload: hand, sharding: 'pipeline', backend: 'ring' }),
    { seed: 3 },
  );
  const byModel = previewPlacements(
    state,
    decodePlacementRequest({ workload: { ...hand, modelBytes: mb }, sharding: 'pipeline', backend: 'ring' }),
    { seed: 3 },
  );
  const essence = (previews: typeof byHand) =>
    previews.map((p) =>
      'plan' in p
        ? {
            option: [p.sharding, p.backend, p.nodeCount],
            nodes: p.plan.instance.nodes,
            shards: p.plan.instance.shards,
            predicted: p.plan.predicted,
          }
        : { option: [p.sharding, p.backend, p.nodeCount], refusal: p.refusal.message },
    );
  t.ok(
    byHand.some((p) => 'plan' in p && p.nodeCount === 3 && p.sharding === 'pipeline'),
    'a 3-stage pipeline is among them',
  );
  t.same(essence(byModel), essence(byHand));
});

t.test(
  "a workload's model resolves against the record: defaults, contradictions (400), unknown (404), not a model (409)",
  async (t) => {
    const id = 'cd'.repeat(32);
    const plain = 'ef'.repeat(32);
    const m = record(
      [['model.embed_tokens.weight', 300, 'embed'], ...blocks(16, 100), ['lm_head.weight', 300, 'head']],
      16,
      {
        hiddenSize: 2048,
        kvHeads: 8,
      },
    );
    const artifacts: ClusterState['artifacts'] = {
      [id]: { name: 'llama', bytes: 9999, chunks: 1, model: m, holders: { a: { have: 1 } } },
      [plain]: { name: 'data.bin', bytes: 10, chunks: 1, holders: { a: { have: 1 } } },
    };
    const r = resolveModelWorkload({ id: 'w', model: id }, artifacts);
    t.match(r, { memoryBytes: 2200, layers: 16, hiddenSize: 2048, kvHeads: 8, model: id });
    t.match(
      resolveModelWorkload({ id: 'w', model: id, memoryBytes: 5000, layers: 16, bytesPerLayer: 100 }, artifacts),
      {
        memoryBytes: 5000,
        layers: 16,
      },
    );
    const fails = (w: Record<string, unknown>, code: string, message: RegExp) => {
      try {
        resolveModelWorkload({ id: 'w', ...w } as ModelSizedFields, artifacts);
        t.fail(`accepted ${JSON.stringify(w)}`);
      } catch (error) {
        t.ok(error instanceof TorusError);
        t.equal((error as TorusError).code, code);
        t.match((error as Error).message, message);
      }
    };
    const id12 = id.slice(0, 12);
    fails(
      { model: id, layers: 32 },
      'TORUS_API_VALIDATION',
      new RegExp(`workload.layers: 32 contradicts model ${id12}'s 16 layers$`),
    );
    fails(
      { model: id, hiddenSize: 4096 },
      'TORUS_API_VALIDATION',
      new RegExp(`workload.hiddenSize: 4096 contradicts model ${id12}'s 2048 hidden size`),
    );
    fails({ model: id, kvHeads: 2 }, 'TORUS_API_VALIDATION', /workload.kvHeads: 2 contradicts .* 8 kv heads/);
    fails(
      { model: id, memoryBytes: 1000 },
      'TORUS_API_VALIDATION',
      /workload.memoryBytes: 1000 contradicts .* 2200 bytes of weights/,
    );
    fails(
      { model: id, bytesPerLayer: 137 },
      'TORUS_API_VALIDATION',
      /workload.bytesPerLayer: 137 contradicts .* 100 bytes per layer/,
    );
    fails({ model: '00'.repeat(32) }, 'TORUS_ARTIFACT_UNKNOWN', /no node holds artifact 0{64}/);
    fails({ model: plain }, 'TORUS_ARTIFACT_NOT_MODEL', /artifact (?:ef){32} \(data.bin\) is not a model/);
    t.equal(new TorusError('TORUS_ARTIFACT_NOT_MODEL', 'x').httpStatus, 409);
  },
);

t.test("the planner's request: modelBytes must cover the layers", async (t) => {
  t.throws(
    () =>
      decodePlacementRequest({
        workload: {
          id: 'w',
          memoryBytes: 10,
          layers: 3,
          modelBytes: { layerBytes: [1, 2], embed: 0, norm: 0, head: 0, all: 0, tiedEmbeddings: false },
        },
        sharding: 'pipeline',
        backend: 'ring',
      }),
    /request.workload.modelBytes.layerBytes: 2 entries for 3 layers/,
  );
});

t.test('torus plan: a request naming model needs modelBytes (the state file has no records)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'torus-model-plan-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const m = record(
    [['model.embed_tokens.weight', 20 * GB, 'embed'], ...blocks(12, 5 * GB), ['lm_head.weight', 20 * GB, 'head']],
    12,
  );
  const workload = { id: 'w', model: 'ab'.repeat(32), memoryBytes: 100 * GB, layers: 12 };
  writeFileSync(join(dir, 'state.json'), JSON.stringify(ringOfFour(30 * GB)));
  const write = (name: string, w: Record<string, unknown>) =>
    writeFileSync(join(dir, name), JSON.stringify({ workload: w, sharding: 'pipeline', backend: 'ring', minNodes: 4 }));
  write('bare.json', workload);
  write('sized.json', { ...workload, modelBytes: modelBytesOf(m) });
  const run = async (request: string) => {
    let out = '';
    const sink = { write: (s: string) => (out += s) };
    const code = await runPlanCommand(
      ['--state', join(dir, 'state.json'), '--request', join(dir, request), '--seed', '1'],
      {
        stdout: sink,
        stderr: sink,
      },
    );
    return { code, out: JSON.parse(out) as Record<string, any> };
  };
  const bare = await run('bare.json');
  t.equal(bare.code, 2);
  t.match(bare.out.error.message, /request.workload.model: torus plan reads no artifact records/);
  const sized = await run('sized.json');
  t.equal(sized.code, 0, JSON.stringify(sized.out).slice(0, 300));
  t.same(
    (sized.out.instance.shards as { startLayer: number; endLayer: number }[]).map((s) => s.endLayer - s.startLayer),
    [1, 5, 5, 1],
  );
});
