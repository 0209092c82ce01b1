#!/usr/bin/env node
// Runs tap, streams its output unchanged, then prints the plain closing line CI reads:
// "N passed, N failed, N skipped" (tap itself ends with "# { total, pass, fail }", which CI does not parse).
// Before it: the suite's wall time and its slowest files, so a slow suite shows where the time goes.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const tapBin = join(dirname(require.resolve('tap/package.json')), 'dist/esm/run.mjs');
const child = spawn(process.execPath, [tapBin, '--reporter=tap', ...process.argv.slice(2)], {
  stdio: ['inherit', 'pipe', 'inherit'],
});
let last = null;
let pending = '';
const summary = /^# \{ total: \d+/;
const fileResult = /^(?:not )?ok \d+ - (\S+) # time=([\d.]+)ms/;
const fileTimes = [];
const started = Date.now();
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    if (summary.test(line)) last = line;
    const file = fileResult.exec(line);
    if (file) fileTimes.push([file[1], Number(file[2]) / 1000]);
  }
});
child.on('close', (code, signal) => {
  if (summary.test(pending)) last = pending;
  const slowest = fileTimes.sort((a, b) => b[1] - a[1]).slice(0, 10);
  if (slowest.length > 0)
    console.log(`# slowest files: ${slowest.map(([f, sec]) => `${f} ${sec.toFixed(1)} s`).join(', ')}`);
  console.log(`# suite wall time: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const count = (key) => Number((last ?? '').match(new RegExp(`\\b${key}: (\\d+)`))?.[1] ?? 0);
  const closing = last
    ? `${count('pass')} passed, ${count('fail')} failed, ${count('skip') + count('todo')} skipped`
    : '0 passed, 1 failed, 0 skipped'; // tap died before its summary
  console.log(closing);
  process.exitCode = signal ? 1 : (code ?? 1);
});
