#!/usr/bin/env node
// `npm run test:unit`: the tests that need no root and no network-namespace lab, by the naming rule of
// scripts/test-sets.mjs: every test/**/*.test.ts except those under test/e2e/, test/lab/ and test/jepsen/ (real
// multi-node clusters) and those whose file name contains "lab" (they build a namespace lab or need root). Extra
// arguments go to tap.
// `--lab` (`npm run test:lab`) selects the rest instead: unit and lab sets together are the whole suite, each file
// in exactly one (CI runs the unit set on the oldest Node of the engines range, the lab set on the active LTS).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { isLabTest } from './test-sets.mjs';

// Links are not followed (test fixtures hold sysfs-like trees with dangling ones).
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    return entry.isDirectory() ? walk(path) : [path];
  });
}

const lab = process.argv.includes('--lab');
const files = walk('test')
  .filter((path) => path.endsWith('.test.ts') && isLabTest(path) === lab)
  .sort();
const tapArgs = process.argv.slice(2).filter((a) => a !== '--lab' && a !== '--list');
if (process.argv.includes('--list')) {
  console.log(files.join('\n'));
  process.exit(0);
}
const child = spawn(process.execPath, [join('scripts', 'tap-summary.mjs'), ...files, ...tapArgs], {
  stdio: 'inherit',
});
child.on('close', (code, signal) => {
  process.exitCode = signal ? 1 : (code ?? 1);
});
