/**
 * Runs the benchmark suites one after another and prints their tables:
 *   npm run bench                 every suite (lab suites need root)
 *   npm run bench -- mailbox ring  chosen suites; extra flags (--quick, --json) pass through
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SUITES = ['mailbox', 'placement', 'reachability', 'probe-accuracy', 'cluster-formation', 'cluster-writes', 'ring', 'frame-decoder', 'artifacts', 'jepsen-soak'];
const args = process.argv.slice(2);
const chosen = args.filter((a) => !a.startsWith('-'));
const flags = args.filter((a) => a.startsWith('-'));
let failed = 0;
for (const suite of chosen.length ? chosen : SUITES) {
  const script = fileURLToPath(new URL(`./${suite}/index.js`, import.meta.url));
  if (!existsSync(script)) {
    console.error(`unknown or unbuilt suite ${suite}; suites: ${SUITES.join(', ')}`);
    failed++;
    continue;
  }
  process.stderr.write(`\n# ${suite}\n`);
  const result = spawnSync(process.execPath, [script, ...flags], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
