/**
 * Runs the benchmark suites one after another and prints their tables:
 *   npm run bench                 every suite (lab suites need root)
 *   npm run bench -- mailbox ring  chosen suites; extra flags (--quick, --json, --seed 7) pass through
 *   npm run bench -- ring-live     ring vs torch Gloo through POST /v1/bench/ring on a lab cluster (root, python3-torch)
 *   npm run bench -- placement-quality --lab  every feasible option of a shaped 5-host lab, measured vs predicted (root)
 *   npm run bench -- soak --minutes 10  memory, fds, threads and data dir of 3 lab nodes under placement churn (root)
 *   npm run bench -- model-fixture --out DIR --size 1GiB --layers 16 --shards 4   a model directory to test with
 *   npm run bench -- model-placement  every feasible placement of a model on 2 shaped 5-host labs, run as a torch pipeline (root, python3-torch)
 *   npm run bench -- model-start --size 1GiB  a model to a 4-stage pipeline on a shaped lab: wall time against the bound (root)
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SUITES = [
  'mailbox',
  'device',
  'startup',
  'placement',
  'placement-quality',
  'reachability',
  'probe-accuracy',
  'cluster-formation',
  'cluster-writes',
  'ring',
  'frame-decoder',
  'artifacts',
  'model-fixture',
  'model-start',
  'model-placement',
  'ring-live',
  'jepsen-soak',
  'soak',
];
const args = process.argv.slice(2);
// A suite name is a known one; anything else is a flag or a flag's value (`--seed 7`), passed through.
const chosen = args.filter((a) => SUITES.includes(a));
const flags = args.filter((a) => !SUITES.includes(a));
const stray = args.filter(
  (a, i) =>
    !a.startsWith('-') && !SUITES.includes(a) && !(args[i - 1]?.startsWith('--') && !args[i - 1]!.includes('=')),
);
if (stray.length > 0) {
  console.error(`unknown suite ${stray.join(', ')}; suites: ${SUITES.join(', ')}`);
  process.exit(1);
}
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let interrupted: NodeJS.Signals | undefined;

/**
 * One suite in a child process. A signal to this process is passed on to the suite, whose own handlers tear down
 * its lab (nodes, namespaces) and may still print what it measured; the suites after it do not start.
 */
function runSuite(script: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...flags], { stdio: 'inherit' });
    const forward = (signal: NodeJS.Signals): void => {
      interrupted = signal;
      child.kill(signal);
    };
    for (const s of SIGNALS) process.on(s, forward);
    child.on('exit', (code) => {
      for (const s of SIGNALS) process.off(s, forward);
      resolve(code ?? 1);
    });
  });
}

let failed = 0;
for (const suite of chosen.length ? chosen : SUITES) {
  if (interrupted) break;
  const script = fileURLToPath(new URL(`./${suite}/index.js`, import.meta.url));
  if (!existsSync(script)) {
    console.error(`unknown or unbuilt suite ${suite}; suites: ${SUITES.join(', ')}`);
    failed++;
    continue;
  }
  process.stderr.write(`\n# ${suite}\n`);
  if ((await runSuite(script)) !== 0) failed++;
}
process.exitCode = interrupted ? 130 : failed ? 1 : 0;
