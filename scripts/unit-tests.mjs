#!/usr/bin/env node
// `npm run test:unit`: the tests that need no root and no network-namespace lab, by a naming rule:
// every test/**/*.test.ts except those under test/e2e/, test/lab/ and test/jepsen/ (real multi-node clusters)
// and those whose file name contains "lab" (they build a namespace lab). Extra arguments go to tap.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

const LAB_DIRS = new Set(['test/e2e', 'test/lab', 'test/jepsen']);
const isUnitTest = (path) =>
  path.endsWith('.test.ts') &&
  !/lab/.test(path.split('/').at(-1)) &&
  ![...LAB_DIRS].some((d) => path.startsWith(`${d}/`));

// Links are not followed (test fixtures hold sysfs-like trees with dangling ones).
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    return entry.isDirectory() ? walk(path) : [path];
  });
}

const files = walk('test').filter(isUnitTest).sort();
if (process.argv.includes('--list')) {
  console.log(files.join('\n'));
  process.exit(0);
}
const child = spawn(process.execPath, [join('scripts', 'tap-summary.mjs'), ...files, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
child.on('close', (code, signal) => {
  process.exitCode = signal ? 1 : (code ?? 1);
});
