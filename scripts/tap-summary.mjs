#!/usr/bin/env node
// Runs tap, streams its output unchanged, then prints the plain closing line CI reads:
// "N passed, N failed, N skipped" (tap itself ends with "# { total, pass, fail }", which CI does not parse).
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
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) if (summary.test(line)) last = line;
});
child.on('close', (code, signal) => {
  if (summary.test(pending)) last = pending;
  const count = (key) => Number((last ?? '').match(new RegExp(`\\b${key}: (\\d+)`))?.[1] ?? 0);
  if (last) console.log(`${count('pass')} passed, ${count('fail')} failed, ${count('skip') + count('todo')} skipped`);
  else console.log('0 passed, 1 failed'); // tap died before its summary
  process.exitCode = signal ? 1 : (code ?? 1);
});
