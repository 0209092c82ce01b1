/**
 * Model placement, measured with a real torch pipeline (docs/placement.md, "Benchmark: model placement"): two
 * shaped 5-host labs (lab-shapes.ts; A: the smallest feasible set is the fastest, B: it is not), a Llama-style
 * fixture model added as a model artifact, nodes' memory capped with --memory-limit so that 2 to 5 nodes are
 * feasible. On each, every feasible option (sweep.ts) gets torus's prediction for a decode step and a prefill
 * (pinned previews) and runs pipeline_job.py under `torus run --model ID --nodes …` (compute not scaled: bf16
 * blocks on the CPU, Gloo between stages); then the planner's own choices and exo's rule.
 *   npm run bench -- model-placement [--quick] [--json] [--shape A|B] [--slow-rate 3mbit] [--rounds N] [--prompt N] [--decode N] [--size 48MiB]
 * Needs root (namespaces) and /usr/bin/python3 with torch; says so and exits 0 otherwise. Targets are printed,
 * not asserted.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseBytes } from '../../src/cli/table.js';
import { BenchOwner, Lab, NodeCluster, nodeUnavailableReason } from '../../src/lab/index.js';
import { args, flag } from '../args.js';
import { makeModel } from '../model-fixture/make-model.js';
import { remeasureDevices } from '../placement-quality/lab-devices.js';
import { printTable } from '../table.js';
import { addModel, labReady, nodeArgsOf, portRate, shapeLab, SHAPE_A, SHAPE_B, type LabShape } from './lab-shapes.js';
import { optionRows, summaryLines } from './report.js';
import { sweep } from './sweep.js';

const json = args.includes('--json');
const quick = args.includes('--quick');
const HERE = fileURLToPath(new URL('../../../benchmarks/model-placement/', import.meta.url));
const whole = (name: string, fallback: number): number => {
  const v = flag(name);
  const n = v === undefined ? fallback : Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name}: expected a whole number ≥ 1, got ${v}`);
  return n;
};
const rounds = whole('--rounds', quick ? 1 : 2);
const promptTokens = whole('--prompt', quick ? 256 : 512);
const decodeSteps = whole('--decode', quick ? 6 : 16);
const modelSize = parseBytes(flag('--size') ?? '48MiB');
const LAYERS = 8;
// B's slow port (default lab-shapes.ts); --slow-rate tries another. Since the stream prober rates a slow link's
// late bytes instead of refusing them (docs/profiler.md), 3 Mbit/s forms the lab too.
const slowRate = flag('--slow-rate');
const shapeB: LabShape = slowRate ? { ...SHAPE_B, ports: { 1: slowRate } } : SHAPE_B;
const shapes = (flag('--shape') ?? 'A,B').split(',').map((s) => {
  const shape = { A: SHAPE_A, B: shapeB }[s.trim().toUpperCase()];
  if (!shape) throw new Error(`--shape: A, B or A,B, got ${s}`);
  return shape;
});
const calibrationCommand = ['/usr/bin/python3', join(HERE, 'calibrate_torch.py')];

const progress = (line: string): void => void process.stderr.write(`[model-placement] ${line}\n`);

function torchMissing(): string | undefined {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import torch'], { stdio: 'ignore', timeout: 60_000 });
    return undefined;
  } catch {
    return 'needs /usr/bin/python3 with torch (Debian package python3-torch)';
  }
}

const describe = (s: LabShape): string =>
  `LAN ${s.lanRate}` +
  Object.keys(s.ports ?? {})
    .map((h) => `, h${h}'s port ${portRate(s, Number(h))}`)
    .join('') +
  (s.cables.length ? `, cables ${s.cables.map((l) => `h${l.a}–h${l.b}`).join(' ')} at ${s.cableRate}` : '') +
  `; memory ${s.memoryShare.map((m, h) => `h${h} ${m}`).join(' ')} of the weights`;

async function runShape(shape: LabShape, modelDir: string, made: { bytes: number; hiddenSize: number }): Promise<void> {
  const owner = new BenchOwner();
  const startedAt = Date.now();
  try {
    progress(`shape ${shape.name} (${shape.claim}): ${describe(shape)}`);
    const lab = await Lab.create({
      hosts: shape.hosts,
      lanRate: shape.lanRate,
      links: shape.cables.map((l) => ({ ...l, rate: shape.cableRate, label: 'thunderbolt' })),
    });
    await shapeLab(lab, shape);
    const c = await NodeCluster.start(owner, lab, { nodeArgs: nodeArgsOf(lab, shape, made.bytes) });
    const t0 = Date.now();
    await c.converged(300_000, labReady(shape));
    progress(`${shape.hosts} nodes agreed, links and devices measured in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    await remeasureDevices(c, progress);
    const modelId = await addModel(c, modelDir);
    const result = await sweep(c, {
      modelId,
      modelBytes: made.bytes,
      layers: LAYERS,
      hiddenSize: made.hiddenSize,
      job: {
        script: join(HERE, 'pipeline_job.py'),
        promptTokens,
        prefills: quick ? 2 : 3,
        decodeSteps,
        warmup: 2,
      },
      quick,
      rounds,
      calibrationCommand,
      say: progress,
    });
    printTable(
      `model placement, shape ${shape.name} (${shape.claim}): torch pipeline measured vs predicted, ` +
        `${made.bytes} bytes of bf16 weights in ${LAYERS} layers, ${rounds} round(s), prefill ${promptTokens} tokens, ${decodeSteps} decode steps; ${describe(shape)}`,
      optionRows(result),
      json,
      summaryLines(result, shape.name === 'B', startedAt, Date.now()).join('\n'),
    );
  } catch (error) {
    owner.ok = false;
    throw error;
  } finally {
    await owner.close();
  }
}

async function main(): Promise<void> {
  const why = Lab.unavailableReason() ?? nodeUnavailableReason() ?? torchMissing();
  if (why) {
    process.stderr.write(`model-placement skipped: ${why}\n`);
    return;
  }
  if (modelSize === undefined) throw new Error(`--size: expected a size such as 48MiB, got ${flag('--size')}`);
  const dir = mkdtempSync(join(tmpdir(), 'torus-model-placement-'));
  try {
    const made = makeModel({ out: join(dir, 'model'), bytes: modelSize, layers: LAYERS, shards: 2 });
    progress(`model: ${made.bytes} bytes, hidden ${made.hiddenSize}, vocabulary ${made.vocab}, ${LAYERS} layers`);
    for (const shape of shapes) await runShape(shape, join(dir, 'model'), made);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main().catch((error: unknown) => {
  process.stderr.write(`model-placement failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
