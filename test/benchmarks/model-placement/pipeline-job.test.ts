/**
 * The torch pipeline job (benchmarks/model-placement/, Debian's python3-torch) on this machine:
 * - split into 2 and 3 stages on one process, and loaded stage by stage from torus shard directories (written by the
 *   repo's own shard writer), its logits are the unsplit model's and a plain float64 reference's (written apart from
 *   it, no KV cache) within float32 rounding, while two wrong references (decode steps without the cache; decode
 *   positions not advanced) are far outside that tolerance;
 * - in bfloat16 the split model's logits are the unsplit model's; the model fixture's weights give finite logits;
 * - as 3 Gloo ranks on loopback (the environment torus and torchrun give), from the whole model or from per-stage
 *   TORUS_MODEL_DIR shards, it decodes the same tokens as one rank; every rank prints its step lines and the bytes
 *   its Gloo pair to the next rank carried; layer ranges that do not split the model exit 2 naming --layers; a rank
 *   that fails makes every rank exit non-zero.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { fileURLToPath } from 'node:url';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import { readModelDir } from '../../../src/artifacts/model/model-reader.js';
import { stageTensors, writeShardDirectory } from '../../../src/artifacts/model/shard-writer.js';
import { torchMissing } from '../../e2e/fixtures/torch-lab.js';
import { freePorts } from '../../ring/fixtures/helpers.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';

const DIR = fileURLToPath(new URL('../../../benchmarks/model-placement', import.meta.url));
const PYTHON = '/usr/bin/python3';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function py(script: string, args: string[], env: NodeJS.ProcessEnv = {}, ms = 120_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [join(DIR, script), ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

interface Check {
  layers: number;
  stageLayers: Record<string, [number, number][]>;
  scale: number;
  errors: Record<string, number>;
  splitVsUnsplit: Record<string, number>;
  controls: Record<string, number>;
  tokens: number[];
  tokensAgree: boolean;
  finite: boolean;
}

async function check(t: Test, args: string[]): Promise<Check> {
  const r = await py('check_split.py', args);
  t.equal(r.code, 0, `check_split ${args.join(' ')} exits 0 (${r.stderr.slice(-600)})`);
  return JSON.parse(r.stdout) as Check;
}

/** torus shard directories of `model` for `ranges`, written by the repo's shard writer. */
async function shards(model: string, ranges: [number, number][], out: string): Promise<string[]> {
  const record = (await readModelDir(model))?.model;
  if (!record) throw new Error(`${model}: not read as a model`);
  return Promise.all(
    ranges.map(async ([fromLayer, toLayer], i) => {
      const dir = join(out, `stage-${i}`);
      await writeShardDirectory(record, stageTensors(record, { fromLayer, toLayer }), model, dir);
      return dir;
    }),
  );
}

type Line = Record<string, any>;
const linesOf = (stdout: string): Line[] =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

/** `world` ranks of pipeline_job.py on loopback, with the variables torchrun (and torus) set; `envOf` adds per rank. */
async function ranks(world: number, args: string[], envOf: (rank: number) => NodeJS.ProcessEnv = () => ({})) {
  const [port] = await freePorts(1);
  return Promise.all(
    Array.from({ length: world }, (_, rank) =>
      py('pipeline_job.py', args, {
        RANK: String(rank),
        WORLD_SIZE: String(world),
        MASTER_ADDR: '127.0.0.1',
        MASTER_PORT: String(port),
        GLOO_SOCKET_IFNAME: 'lo',
        ...envOf(rank),
      }),
    ),
  );
}

const why = torchMissing();
// ~25 Python processes, each importing torch: 40 s on a quiet 2-core machine, 160 s at load 10.
t.setTimeout(300_000);

t.test(
  'the pipeline computes the model: split, from shards, on Gloo ranks',
  { skip: skipOrFail(why), timeout: 290_000 },
  async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'torus-pipeline-job-'));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    const gqa = join(root, 'gqa');
    const tied = join(root, 'tied');
    t.equal((await py('make_test_model.py', [gqa, '--layers', '5'])).code, 0, 'a GQA model (4 heads, 2 kv heads)');
    t.equal(
      (await py('make_test_model.py', [tied, '--layers', '4', '--tied'])).code,
      0,
      'a model with tied embeddings',
    );

    const TOL = 1e-4; // float32 against float64, relative to the largest logit
    for (const [name, model, layers] of [
      ['GQA', gqa, 5],
      ['tied', tied, 4],
    ] as const) {
      const three: [number, number][] =
        layers === 5
          ? [
              [0, 2],
              [2, 4],
              [4, 5],
            ]
          : [
              [0, 2],
              [2, 3],
              [3, 4],
            ];
      const dirs = await shards(model, three, join(root, `${name}-shards`));
      const c = await check(t, [
        '--model',
        model,
        '--splits',
        '1,2,3',
        '--stage-dirs',
        dirs.join(','),
        '--dtype',
        'float32',
      ]);
      t.same(c.stageLayers['3'], three, `${name}: 3 stages hold layers ${JSON.stringify(three)}`);
      for (const k of ['1', '2', '3', 'dirs'])
        t.ok(c.errors[k]! <= TOL, `${name}, ${k} stage(s): logits within ${TOL} of the reference (${c.errors[k]})`);
      for (const [control, e] of Object.entries(c.controls))
        t.ok(e > 1000 * TOL, `${name}: a wrong reference (${control}) is ${e}, far outside the tolerance`);
      t.ok(c.tokensAgree && c.finite, `${name}: every split and the reference choose the same tokens ${c.tokens}`);
      if (name === 'GQA')
        t.ok(new Set(c.tokens).size > 2, `the GQA model decodes varied tokens: agreeing means something`);
    }
    const bf16 = await check(t, ['--model', gqa, '--splits', '1,2,3', '--dtype', 'bfloat16']);
    for (const k of ['2', '3']) t.ok(bf16.splitVsUnsplit[k]! <= 1e-2, `bfloat16, ${k} stages: the unsplit logits`);

    // The fixture's random weights: finite logits (raw random BF16 bits hold infinities and NaNs).
    const fixture = join(root, 'fixture');
    makeModel({ out: fixture, bytes: 4 * 2 ** 20, layers: 4, shards: 2 });
    const f = await check(t, ['--model', fixture, '--splits', '1,2', '--dtype', 'bfloat16', '--decode-steps', '2']);
    t.ok(f.finite && f.scale > 0, `the fixture's logits are finite (largest ${f.scale})`);
    t.ok(f.splitVsUnsplit['2']! <= 1e-2, 'the fixture split in 2: the unsplit logits');

    // Gloo ranks on loopback: 3 stages decode what 1 rank decodes, from the whole model and from per-stage shards.
    const args = ['--dtype', 'float32', '--prompt-tokens', '12', '--decode-steps', '6'];
    const tokensOf = (out: Ran) =>
      linesOf(out.stdout)
        .filter((l) => l.event === 'step')
        .map((l) => l.token as number);
    const [one] = await ranks(1, [...args, '--model', gqa]);
    t.equal(one!.code, 0, `one rank exits 0 (${one!.stderr.slice(-400)})`);
    const expected = tokensOf(one!);
    t.equal(expected.length, 7, 'one rank: a prefill and 6 decode steps');
    // --prefills 3: the prompt three times, each a new sequence (the KV cache emptied), then the same decode.
    const [again] = await ranks(1, [...args, '--model', gqa, '--prefills', '3']);
    t.equal(again!.code, 0, `--prefills 3: exits 0 (${again!.stderr.slice(-400)})`);
    const againSteps = linesOf(again!.stdout).filter((l) => l.event === 'step');
    t.same(
      againSteps.map((l) => l.kind),
      ['prefill', 'prefill', 'prefill', ...Array.from({ length: 6 }, () => 'decode')],
      '--prefills 3: three prefill lines, then the decode steps',
    );
    t.same(
      againSteps.map((l) => l.token),
      [expected[0], expected[0], ...expected],
      '--prefills 3: each prefill is the first one again, and the decode goes on as after one',
    );
    const gqaDirs = await shards(
      gqa,
      [
        [0, 1],
        [1, 3],
        [3, 5],
      ],
      join(root, 'gqa-rank-shards'),
    );
    for (const [how, run] of [
      ['--model', () => ranks(3, [...args, '--model', gqa])],
      ['TORUS_MODEL_DIR', () => ranks(3, args, (r) => ({ TORUS_MODEL_DIR: gqaDirs[r] }))],
    ] as const) {
      const out = await run();
      t.same(
        out.map((o) => o.code),
        [0, 0, 0],
        `${how}: every rank exits 0 (${out.map((o) => o.stderr.slice(-300)).join(' | ')})`,
      );
      const stages = out.map((o) => linesOf(o.stdout).find((l) => l.event === 'stage')!);
      t.same(
        stages.map((s) => s.layers),
        how === '--model'
          ? [
              [0, 2],
              [2, 4],
              [4, 5],
            ]
          : [
              [0, 1],
              [1, 3],
              [3, 5],
            ],
        `${how}: the layer ranges (${stages.map((s) => s.source).join(', ')})`,
      );
      t.same(tokensOf(out[2]!), expected, `${how}: 3 Gloo stages decode the tokens one rank decodes`);
      for (const [r, o] of out.entries()) {
        const steps = linesOf(o.stdout).filter((l) => l.event === 'step');
        t.same(
          steps.map((l) => [l.kind, l.step]),
          [['prefill', 0], ...Array.from({ length: 6 }, (_, i) => ['decode', i + 1])],
          `${how}, rank ${r}: a line per step`,
        );
        t.ok(
          steps.every((l) => l.computeMs > 0 && l.recvWaitMs >= 0 && l.sendMs >= 0 && (r === 2) === 'stepMs' in l),
          `${how}, rank ${r}: stage times, the whole step time on the last rank only`,
        );
      }
      // Rank 0 → rank 1 carries the activations: 18 positions × 128 hidden × 4 bytes, on a Gloo pair (not the store).
      const links = linesOf(out[0]!.stdout).find((l) => l.event === 'links')!.links as Line[];
      const activations = (12 + 6) * 128 * 4;
      t.ok(
        links.some((l) => !l.store && l.sent >= activations),
        `${how}: rank 0 sent ≥ ${activations} bytes on a Gloo pair: ${JSON.stringify(links)}`,
      );
    }

    // The plan's layers that do not split the model (torus run without --layers: one layer per rank): exit 2.
    const wrong = await ranks(3, [...args, '--model', gqa], (r) => ({
      TORUS_LAYER_START: String(r),
      TORUS_LAYER_END: String(r + 1),
    }));
    t.same(
      wrong.map((o) => o.code),
      [2, 2, 2],
      'ranges 0:1, 1:2, 2:3 of a 5-layer model: every rank exits 2',
    );
    t.match(wrong[0]!.stderr, /do not split the model's 5 layers .*--layers/, wrong[0]!.stderr);

    // Rank 1 fails after 2 steps: its peers' Gloo connections close, every rank exits non-zero.
    const started = Date.now();
    const failed = await ranks(3, [
      ...args,
      '--model',
      gqa,
      '--fail-rank',
      '1',
      '--fail-after',
      '2',
      '--timeout',
      '60',
    ]);
    t.equal(failed[1]!.code, 3, 'rank 1 exits 3');
    t.ok(
      failed.every((o) => o.code !== 0),
      `every rank exits non-zero (${failed.map((o) => o.code)}) within ${Date.now() - started} ms`,
    );
    t.ok(Date.now() - started < 50_000, 'before the Gloo timeout: the closed connection ends them');
  },
);
