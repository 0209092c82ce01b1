/**
 * Every command in README.md's and docs/*.md's code (fenced blocks and inline spans, ./doc-commands.ts) against
 * the real CLI, so a renamed command or flag fails here, not for the reader:
 * - the cheap ones run for real against a node on loopback (in this process, 127.0.0.1, port 0, no mDNS, a temp
 *   data dir that the CLI finds the token in, as the README says): status, place, instances, delete, peers,
 *   token, artifacts ls, bench pipeline. Each exits 0, or 1 with a refusal for the node's state (a synopsis's
 *   example nodes are not members), never with a usage or validation error.
 * - the other CLI commands that talk to a node are parsed by the real parser and then stopped at the network: run
 *   against an API address nothing listens on, they get as far as the request (exit 1, "unreachable"), which a
 *   unknown flag or a bad value (exit 2, usage) never does. Jobs (`run`), artifact transfers, lab benchmarks and
 *   measurements need a cluster, root or minutes, so they are parse-checked only.
 * - commands that do not talk to a node (starting a node, `plan`, `token`, `bench ring` in a lab) are parsed with
 *   `--help` added: their parser reads every flag strictly before it looks at --help (checked below with an
 *   unknown flag), and they need root or a lab to run.
 * - `npm run bench -- SUITE …`: the suite must be one benchmarks/run.ts runs, and every flag one its code reads.
 *   The suites read flags by name (benchmarks/args.ts) and ignore others, so there is no parser to ask: the test
 *   reads the flag names in the suite's sources. The suites need root labs and minutes: not run here.
 * Placeholders (ID, SIZE, DIR, …) are filled with examples; EXCEPTIONS lists the spans that are not commands.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopbackNode } from '../fixtures/loopback-node.js';
import { docCommands } from './doc-commands.js';

t.setTimeout(300_000);

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = join(ROOT, 'dist/main.js');
const DEAD_API = 'http://127.0.0.1:1';

/** Code spans that are intentionally not runnable commands, by where and what they say. */
const EXCEPTIONS: Record<string, string> = {
  'node dist/main.js [start] [options]': 'the usage synopsis of the node (options are listed below it)',
  'npm run bench -- <suite>': 'names the form of every suite command',
  'torus artifact v1\\n<METHOD>\\n<path?query>\\n<ms>': 'the text a peer signs, not a command',
  'torus run': 'names the verb in prose',
  'node dist/main.js bench pipeline': 'names the verb in prose',
};

/** Commands that do not talk to a node: parsed with --help. */
const isLocal = (argv: readonly string[]): boolean =>
  argv.length === 0 ||
  argv[0]!.startsWith('-') ||
  ['start', 'plan', 'token', 'help'].includes(argv[0]!) ||
  (argv[0] === 'bench' && argv[1] === 'ring' && !argv.includes('--live'));
/** Commands cheap enough to run against the loopback node. */
const isCheap = (argv: readonly string[]): boolean =>
  ['status', 'place', 'instances', 'delete', 'peers'].includes(argv[0]!) ||
  (argv[0] === 'token' && argv.includes('--api')) ||
  (argv[0] === 'artifacts' && (argv[1] === 'ls' || argv[1] === 'add')) ||
  (argv[0] === 'bench' && argv[1] === 'pipeline');

/** Examples for the placeholders a synopsis writes. */
function fill(argv: readonly string[], ctx: { file: string; dir: string; api: string; instance: string }): string[] {
  const artifactVerb = argv[0] === 'artifacts';
  const flagValue: Record<string, string> = {
    sharding: 'pipeline',
    backend: 'ring',
    ops: 'all-reduce',
    dtype: 'float32',
  };
  return argv.flatMap((tok, i): string[] => {
    const prev = argv[i - 1] ?? '';
    if (tok === '…') return [flagValue[prev.replace(/^-+/, '')] ?? 'x'];
    if (tok === 'ARGS') return [];
    const by: Record<string, string> = {
      ID: (artifactVerb && prev !== '--instance') || prev === '--model' ? 'ab'.repeat(32) : ctx.instance,
      I: ctx.instance,
      N: '2',
      P: '40000',
      SIZE: '1GiB',
      'MIN-MAX': '10000-19999',
      'A,B': 'node-a,node-b',
      'N1,N2,': 'node-a,node-b',
      CMD: '/bin/true',
      ADDR: '127.0.0.1',
      'ADDR:PORT': '127.0.0.1:52515',
      '<addr>:52515': '127.0.0.1:52515',
      PATH: ctx.file,
      FILE: ctx.file,
      DIR: ctx.dir,
      URL: ctx.api,
      NAME: 'demo',
    };
    return [by[tok] ?? tok];
  });
}

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}
function cli(args: readonly string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}
/** `--help` before a `--` (after it, words belong to the job's command). */
const withHelp = (argv: readonly string[]): string[] => {
  const end = argv.indexOf('--');
  return end < 0 ? [...argv, '--help'] : [...argv.slice(0, end), '--help', ...argv.slice(end)];
};

const commands = docCommands(ROOT);
const checked = commands.filter((c) => !Object.hasOwn(EXCEPTIONS, c.text));

t.test('the docs have commands, and every exception is still in them', async (t) => {
  t.ok(checked.filter((c) => c.program === 'cli').length > 40, `CLI commands: ${checked.length}`);
  for (const text of Object.keys(EXCEPTIONS))
    t.ok(
      commands.some((c) => c.text === text),
      `exception still written: ${text}`,
    );
});

t.test('every `npm run bench -- SUITE` names a suite, and every flag is one the suite reads', async (t) => {
  const run = readFileSync(join(ROOT, 'benchmarks/run.ts'), 'utf8');
  const suites = [...(/const SUITES = \[([^\]]*)\]/.exec(run)?.[1] ?? '').matchAll(/'([\w-]+)'/g)].map((m) => m[1]!);
  t.ok(suites.length > 10, 'the suite list of benchmarks/run.ts');
  for (const c of checked.filter((c) => c.program === 'bench')) {
    for (const argv of c.variants) {
      const [suite, ...flags] = argv;
      if (!t.ok(suite && suites.includes(suite), `${c.where} \`${c.text}\`: ${suite} is a suite`)) continue;
      const read = flagsRead(join(ROOT, 'benchmarks', suite!));
      for (const flag of flags.filter((f) => f.startsWith('--')).map((f) => f.split('=')[0]!))
        t.ok(read.has(flag), `${c.where}: ${suite} reads ${flag}`);
    }
  }
});

/** The flag names a suite's sources read: every '--name' string in them, and every `name: { type: … }` option of a parseArgs table. */
function flagsRead(dir: string): Set<string> {
  const names = new Set<string>();
  const walk = (d: string): void => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (f.endsWith('.ts')) {
        const source = readFileSync(p, 'utf8');
        for (const m of source.matchAll(/['"`](--[a-z][a-z0-9-]*)['"`=]/g)) names.add(m[1]!);
        for (const m of source.matchAll(/['"]?([a-z][a-z0-9-]*)['"]?:\s*\{\s*type:/g)) names.add(`--${m[1]!}`);
      }
    }
  };
  walk(dir);
  return names;
}

t.test('the CLI commands of the docs against the real CLI', async (t) => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
  const dir = mkdtempSync(join(tmpdir(), 'torus-doc-commands-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dataDir = join(dir, 'data');
  const file = join(dir, 'artifact.bin');
  writeFileSync(file, 'an artifact\n');
  const { url: api } = await startLoopbackNode(t, [], { dataDir });
  // As the README says: on the node's machine the CLI finds the token in the data dir.
  const nodeEnv = { TORUS_API: api, TORUS_DATA_DIR: dataDir, TORUS_TOKEN: '' };
  const deadEnv = { TORUS_API: DEAD_API, TORUS_DATA_DIR: dataDir, TORUS_TOKEN: 'not-used' };

  const cliCommands = checked.filter((c) => c.program === 'cli');
  const variants = cliCommands.flatMap((c) => c.variants.map((argv) => ({ c, argv })));
  // Places first, so `instances ID` / `delete ID` name a real instance; deletes last.
  const rank = (argv: readonly string[]): number => (argv[0] === 'place' ? 0 : argv[0] === 'delete' ? 2 : 1);
  variants.sort((a, b) => rank(a.argv) - rank(b.argv));
  let instance = 'no-instance-placed';
  const counts = { ran: 0, parsedToNetwork: 0, parsedWithHelp: 0 };

  // Against the node, one after another (a place before the instances and deletes that name its id).
  for (const { c, argv } of variants.filter((v) => !isLocal(v.argv) && isCheap(v.argv))) {
    const label = `${c.where} \`${c.text}\``;
    const res = await cli(fill(argv, { file, dir, api, instance }), nodeEnv);
    const refusal = /\((TORUS_[A-Z_]+)\)/.exec(res.stderr)?.[1];
    // Only a place may be refused, and only for the state (a synopsis's example nodes are not members, exec is
    // not allowed on this node): never for its shape.
    const stateRefusal =
      argv[0] === 'place' &&
      res.code === 1 &&
      refusal !== undefined &&
      !['TORUS_API_VALIDATION', 'TORUS_CONFIG_INVALID', 'TORUS_UNAUTHENTICATED'].includes(refusal);
    if (stateRefusal) t.comment(`${label}: refused for the node's state (${refusal})`);
    t.ok(
      res.code === 0 || stateRefusal,
      `${label}: runs against a node (exit ${res.code}) ${res.stderr.slice(0, 300)}`,
    );
    const placed = /^placed (\S+) on /m.exec(res.stdout)?.[1];
    if (argv[0] === 'place' && placed) instance = placed;
    counts.ran++;
  }
  // Parse checks, a few processes at a time.
  const parseOnly = variants.filter((v) => isLocal(v.argv) || !isCheap(v.argv));
  const check = async ({ c, argv }: (typeof variants)[number]): Promise<void> => {
    const label = `${c.where} \`${c.text}\``;
    if (isLocal(argv)) {
      const res = await cli(withHelp(fill(argv, { file, dir, api, instance })), {});
      t.equal(res.code, 0, `${label}: parses (--help) ${res.stderr.slice(0, 300)}`);
      counts.parsedWithHelp++;
      return;
    }
    const res = await cli(fill(argv, { file, dir, api: DEAD_API, instance }), deadEnv);
    t.ok(
      res.code === 1 && /127\.0\.0\.1:1\b/.test(res.stderr) && !/usage/i.test(res.stderr),
      `${label}: parses and gets as far as the request (exit ${res.code}) ${res.stderr.slice(0, 300)}`,
    );
    counts.parsedToNetwork++;
  };
  for (let i = 0; i < parseOnly.length; i += 3) await Promise.all(parseOnly.slice(i, i + 3).map(check));
  t.not(instance, 'no-instance-placed', "the README's place command placed an instance");
  t.ok(counts.ran >= 8 && counts.parsedToNetwork >= 10 && counts.parsedWithHelp >= 8, JSON.stringify(counts));
});

t.test('an unknown flag fails each parser, --help or not (so the checks above can fail)', async (t) => {
  const probes = [
    ['--no-such-flag'],
    ['start', '--no-such-flag'],
    ['plan', '--no-such-flag'],
    ['token', '--no-such-flag'],
    ['bench', 'ring', '--no-such-flag'],
  ];
  for (const argv of probes) {
    const res = await cli(withHelp(argv), {});
    t.equal(res.code, 2, `${argv.join(' ')} --help: exit 2`);
  }
  for (const argv of [
    ['status', '--no-such-flag'],
    ['place', '--workload-id', 'demo', '--memory', '1GiB', '--layers', '2'],
    ['bench', 'pipeline', '--no-such-flag'],
  ]) {
    const res = await cli(argv, { TORUS_API: DEAD_API, TORUS_TOKEN: 'x' });
    t.equal(res.code, 2, `${argv.join(' ')}: exit 2 before any request`);
  }
});
