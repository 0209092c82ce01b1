import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runPlanCommand } from '../../../../src/cli/plan.js';
import { childExecArgv } from '../../../../src/runtime/module-url.js';
import { both, GB, makeState, request } from '../../../fixtures/placement/build-state.js';
import { partRuns } from '../../../fixtures/skip-or-fail.js';

const exec = promisify(execFile);

async function run(args: string[]): Promise<{ code: number; out: unknown; raw: string; err: string }> {
  let raw = '',
    err = '';
  const code = await runPlanCommand(args, {
    stdout: {
      write: (s: string) => {
        raw += s;
      },
    },
    stderr: {
      write: (s: string) => {
        err += s;
      },
    },
  });
  let out: unknown;
  try {
    out = JSON.parse(raw);
  } catch {
    out = undefined;
  }
  return { code, out, raw, err };
}

t.test('plan command: JSON in, JSON out, exit codes', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'torus-plan-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const state = makeState([
    { id: 'a', mem: 4 * GB },
    { id: 'b', mem: 4 * GB },
    { id: 'c', mem: 4 * GB },
  ]);
  both(state, 'a', 'b', 'ethernet', { bw: 1e9 });
  both(state, 'b', 'c', 'ethernet', { bw: 1e9 });
  both(state, 'a', 'c', 'thunderbolt', { bw: 10e9 });
  const files = {
    state: join(dir, 'state.json'),
    request: join(dir, 'request.json'),
    big: join(dir, 'big.json'),
    broken: join(dir, 'broken.json'),
    invalid: join(dir, 'invalid.json'),
  };
  await writeFile(files.state, JSON.stringify(state));
  await writeFile(files.request, JSON.stringify(request({}, { memoryBytes: 6 * GB })));
  await writeFile(files.big, JSON.stringify(request({}, { memoryBytes: 50 * GB })));
  await writeFile(files.broken, '{"nodes": [');
  await writeFile(
    files.invalid,
    JSON.stringify({ nodes: [{ id: 'a', memory: { ramAvailable: 'lots', ramTotal: 1 } }] }),
  );

  const ok = await run(['--state', files.state, '--request', files.request, '--seed', '11']);
  t.equal(ok.code, 0);
  const plan = ok.out as {
    instance: { nodes: string[]; port: number; hostsByNode: Record<string, unknown> };
    explanation: { seed: number };
  };
  t.same(plan.instance.nodes, ['a', 'c'], 'the Thunderbolt pair');
  t.equal(plan.explanation.seed, 11);
  t.ok(plan.instance.hostsByNode.a);
  const again = await run([`--state=${files.state}`, `--request=${files.request}`, '--seed=11']);
  t.equal(again.raw, ok.raw, 'same seed, same bytes');
  const unseeded = await run(['--state', files.state, '--request', files.request]);
  t.equal(unseeded.code, 0);
  t.type((unseeded.out as { explanation: { seed: number } }).explanation.seed, 'number', 'the random seed is echoed');

  const refused = await run(['--state', files.state, '--request', files.big]);
  t.equal(refused.code, 2);
  const rerr = (refused.out as { error: { message: string; code: string; kind: string } }).error;
  t.match(rerr.message, /memory/);
  t.equal(rerr.code, 'TORUS_PLACEMENT_REFUSED');
  t.equal(rerr.kind, 'memory');

  for (const [args, pattern] of [
    [['--state', files.broken, '--request', files.request], /--state file .*broken\.json is not valid JSON/],
    [
      ['--state', files.invalid, '--request', files.request],
      /state\.nodes\[0\]\.memory\.ramAvailable: expected a finite number/,
    ],
    [
      ['--state', join(dir, 'missing.json'), '--request', files.request],
      /cannot read --state file .*missing\.json: ENOENT/,
    ],
    [['--state', files.state, '--request', files.state], /request\.workload: is required/],
    [['--state', files.state], /--request REQUEST\.json is required/],
    [['--state', files.state, '--request', files.request, '--seed', '-1'], /--seed must be an integer/],
    [['--state', files.state, '--request', files.request, '--bogus'], /unknown argument "--bogus"/],
    [['--state'], /--state needs a value/],
  ] as const) {
    const r = await run([...args]);
    t.equal(r.code, 2, `exit 2 for ${args.join(' ')}`);
    t.match((r.out as { error: { message: string } } | undefined)?.error?.message ?? r.raw, pattern);
  }
  const help = await run(['--help']);
  t.equal(help.code, 0);
  t.match(help.raw, /usage: torus plan/);

  const previews = await run(['--state', files.state, '--request', files.request, '--previews', '--seed', '1']);
  t.equal(previews.code, 0);
  const list = (
    previews.out as {
      previews: {
        sharding: string;
        backend: string;
        nodeCount: number;
        plan?: { instance: { nodes: string[] } };
        refusal?: { message: string };
      }[];
    }
  ).previews;
  t.equal(list.length, 2 * 2 * 3, 'pipeline/tensor × ring/jaccl × 1..3 nodes');
  const ring2 = list.find((p) => p.sharding === 'pipeline' && p.backend === 'ring' && p.nodeCount === 2);
  t.same(ring2?.plan?.instance.nodes, ['a', 'c']);
  const ring1 = list.find((p) => p.sharding === 'pipeline' && p.backend === 'ring' && p.nodeCount === 1);
  t.match(ring1?.refusal?.message ?? '', /memory/);
  const jaccl3 = list.find((p) => p.backend === 'jaccl' && p.nodeCount === 3 && p.sharding === 'pipeline');
  t.match(jaccl3?.refusal?.message ?? '', /RDMA/);
  t.ok(
    list.filter((p) => p.sharding === 'tensor').every((p) => p.refusal && /tensor/.test(p.refusal.message)),
    'tensor refused: not supported',
  );

  // The same through a real process: direct invocation of the module (before main.ts wires `plan`).
  const entry = fileURLToPath(
    new URL(
      import.meta.url.endsWith('.ts') ? '../../../../src/cli/plan.ts' : '../../../../src/cli/plan.js',
      import.meta.url,
    ),
  );
  const child = await exec(process.execPath, [
    ...childExecArgv(import.meta.url),
    entry,
    '--state',
    files.state,
    '--request',
    files.request,
    '--seed',
    '11',
  ]);
  t.equal(child.stdout, ok.raw, 'child prints the same plan');
  const bad = await exec(process.execPath, [
    ...childExecArgv(import.meta.url),
    entry,
    '--state',
    files.broken,
    '--request',
    files.request,
  ]).catch((e: { code: number; stdout: string }) => e);
  t.equal((bad as { code: number }).code, 2, 'child exits 2');
  t.match(JSON.parse((bad as { stdout: string }).stdout).error.message, /not valid JSON/);

  // And as the CLI ships it: `node dist/main.js plan ...` (needs `npm run build`, which `npm test` runs first).
  const main = fileURLToPath(new URL('../../../../dist/main.js', import.meta.url));
  if (!partRuns(t, 'dist/main.js plan', existsSync(main) ? undefined : 'dist/main.js not built (run npm run build)'))
    return;
  const viaMain = await exec(process.execPath, [
    main,
    'plan',
    '--state',
    files.state,
    '--request',
    files.request,
    '--seed',
    '11',
  ]);
  t.equal(viaMain.stdout, ok.raw, 'dist/main.js plan prints the same plan');
  const refusedMain = await exec(process.execPath, [
    main,
    'plan',
    '--state',
    files.state,
    '--request',
    files.big,
  ]).catch((e: { code: number; stdout: string }) => e);
  t.equal((refusedMain as { code: number }).code, 2, 'dist/main.js plan exits 2 on a refusal');
  t.match(JSON.parse((refusedMain as { stdout: string }).stdout).error.message, /memory/);
});
