/**
 * The core of `npm run bench -- model-placement` (benchmarks/model-placement/sweep.ts) on a 3-host lab: a fixture
 * model added as a model artifact, memory capped so that {h0, h1} and {h0, h1, h2} hold it and no other set does.
 * Not the figures (they depend on the machine): that every feasible option got a prediction for a decode step and a
 * prefill, ran its torch ranks on its own nodes in its own order, loaded the plan's layers from the model's shard
 * directories, and sent its hidden states over the Gloo pairs between the plan's mesh addresses; and that the table
 * has a row per option with the planner's and exo's marks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { makeModel } from '../../../benchmarks/model-fixture/make-model.js';
import {
  addModel,
  labReady,
  nodeArgsOf,
  shapeLab,
  type LabShape,
} from '../../../benchmarks/model-placement/lab-shapes.js';
import { optionRows, summaryLines } from '../../../benchmarks/model-placement/report.js';
import { sweep } from '../../../benchmarks/model-placement/sweep.js';
import { withLab } from '../../../src/lab/index.js';
import { E2eCluster } from '../../e2e/lab-cluster.js';
import { why } from '../../e2e/fixtures/torch-lab.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';

t.setTimeout(300_000);

const SCRIPT = fileURLToPath(new URL('../../../benchmarks/model-placement/pipeline_job.py', import.meta.url));
const LAYERS = 4;
const SHAPE: LabShape = {
  name: 'test',
  claim: 'three hosts on one LAN',
  hosts: 3,
  lanRate: '200mbit',
  cables: [],
  cableRate: '1gbit',
  memoryShare: [0.6, 0.6, 0.35],
};

t.test(
  'model-placement on a 3-host lab: every feasible option predicted and run as torch ranks over the planned addresses',
  { timeout: 280_000, skip: skipOrFail(why) },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'torus-model-placement-test-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const model = join(dir, 'model');
    const made = makeModel({ out: model, bytes: 12 * 2 ** 20, layers: LAYERS, shards: 2 });
    await withLab(t, { hosts: SHAPE.hosts, lanRate: SHAPE.lanRate }, async (lab) => {
      await shapeLab(lab, SHAPE);
      const c = await E2eCluster.start(t, lab, { nodeArgs: nodeArgsOf(lab, SHAPE, made.bytes) });
      await c.converged(150_000, labReady(SHAPE));
      const modelId = await addModel(c, model);
      const said: string[] = [];
      const job = { script: SCRIPT, promptTokens: 64, prefills: 2, decodeSteps: 4, warmup: 1 };
      const r = await sweep(c, {
        modelId,
        modelBytes: made.bytes,
        layers: LAYERS,
        hiddenSize: made.hiddenSize,
        job,
        quick: false,
        rounds: 1,
        calibrationCommand: ['/usr/bin/python3', join(dir, 'absent-calibration.py')],
        say: (l) => said.push(l),
      });
      const [h0, h1, h2] = c.nodes.map((n) => n.id as string);
      const sets = r.options.map((o) => [...o.nodes].sort().join(','));
      t.same(
        [...new Set(sets)].sort(),
        [[h0, h1].sort().join(','), [h0, h1, h2].sort().join(',')].sort(),
        `the options are the two feasible sets {h0,h1} and {h0,h1,h2}: ${r.options.map((o) => o.label).join(' ')}`,
      );
      t.match(said.join('\n'), /no calibration: torus kernel figures/, 'no calibration route served: said so');
      for (const o of r.options) {
        t.equal(o.runs.length, 1, `${o.label}: one run`);
        const run = o.runs[0]!;
        t.same(run.nodes, o.nodes, `${o.label}: the ranks ran on the option's nodes in its order`);
        t.ok(o.predictedDecodeMs > 0 && o.predictedPrefillMs > o.predictedDecodeMs, `${o.label}: both predictions`);
        t.ok(o.decodeMs > 0 && o.prefillMs > 0, `${o.label}: both measured`);
        t.same(
          run.ranks.map((x) => x.layers[1]! - x.layers[0]!),
          o.layers,
          `${o.label}: each rank ran the plan's layers (${o.layers.join('/')})`,
        );
        t.ok(
          run.ranks.every((x) => x.source === 'TORUS_MODEL_DIR'),
          `${o.label}: every rank read its layers from the model artifact's shard`,
        );
        for (const x of run.ranks)
          t.ok(
            x.sentToNext >= x.expected,
            `${o.label} rank ${x.rank}: ${x.sentToNext} bytes to the next rank's planned address (≥ ${x.expected})`,
          );
        t.ok(o.overPlannedAddresses, `${o.label}: over the planned addresses`);
      }
      t.ok(
        r.options.some((o) => o.key === r.plannerDecode.key),
        "the planner's decode choice is a measured option",
      );
      t.ok(
        r.options.some((o) => o.key === r.plannerPrefillKey),
        "the planner's prefill choice is a measured option",
      );
      t.equal(r.exoKey?.split(',').length, 2, "exo's rule: the smallest set");
      const rows = optionRows(r);
      t.equal(rows.length, r.options.length, 'a row per option');
      for (const row of rows)
        t.same(
          Object.keys(row),
          [
            'option',
            'nodes',
            'layers',
            'decode pred ms',
            'decode ms',
            'decode |err| %',
            'prefill pred ms',
            'prefill ms',
            'prefill |err| %',
            'planned addrs',
            '',
          ],
          `row ${String(row.option)}: its columns`,
        );
      const marks = rows.map((x) => x['']).join(' ');
      for (const mark of ['planner (decode)', 'planner (prefill)', 'exo rule', 'best decode', 'best prefill'])
        t.ok(marks.includes(mark), `the table marks ${mark}`);
      const summary = summaryLines(r, false, Date.now() - 1000, Date.now()).join('\n');
      t.match(summary, /median \|error\| decode [\d.]+ % \(worst [\d.]+ %\), prefill [\d.]+ % \(worst [\d.]+ %\)/);
      t.match(summary, /every option ran its torch ranks over the planned addresses: yes/);
    });
  },
);
