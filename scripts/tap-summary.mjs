#!/usr/bin/env node
// Runs tap, streams its output unchanged, then prints the plain closing line CI reads:
// "N passed, N failed, N skipped" (tap itself ends with "# { total, pass, fail }", which CI does not parse).
// Before it: the suite's wall time, its slowest files, and the files whose process outlived its tests by seconds
// (a handle left open keeps a test process alive: the time is lost to every run, so it is worth naming).
// Last, the failures by name (file › test › assertion): a CI log is often read from its tail only.
// Where every lab test must run (as root, or TORUS_REQUIRE_LAB=1 as CI sets: scripts/test-sets.mjs), a skip in a
// lab-set file fails the run and is named, however the test skipped (tap's skip option, t.plan(0), a todo, or a
// test that returned having asserted nothing): the safety net behind test/fixtures/skip-or-fail.ts, which lab tests
// call to skip.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isLabTest, labRequired } from './test-sets.mjs';

const require = createRequire(import.meta.url);
const tapBin = join(dirname(require.resolve('tap/package.json')), 'dist/esm/run.mjs');
const child = spawn(process.execPath, [tapBin, '--reporter=tap', ...process.argv.slice(2)], {
  stdio: ['inherit', 'pipe', 'inherit'],
});
let last = null;
let pending = '';
const summary = /^# \{ total: \d+/;
const fileResult = /^(?:not )?ok \d+ - (\S+) # time=([\d.]+)ms/;
const testResult = /^ {4}(?:not )?ok \d+ - .* # time=([\d.]+)ms/;
const fileTimes = [];
const lingering = [];
let testsMs = 0;
// The open "# Subtest:" names by depth (4 spaces per level), and the failures found, deepest first.
const subtests = [];
const failures = [];
const subtestStart = /^((?: {4})*)# Subtest: (.*)$/;
const notOk = /^((?: {4})*)not ok \d+ - (.*?)(?: # (?:time=|SKIP|TODO).*)?$/;
// A skipped test, assertion or file (`ok 3 - name # SKIP reason`); the file is the open depth-0 subtest, or the
// name itself on a depth-0 line (a file skipped whole).
const skipped = /^((?: {4})*)(?:not )?ok \d+ - (.*?) # (SKIP|TODO)\b\s*(.*)$/;
// A test that ran no assertion and did not say it skipped (`1..0` without a reason): an early return skips silently.
const emptyPlan = /^((?: {4})+)1\.\.0\s*$/;
const mustRunLab = labRequired();
const labSkips = [];
function noteFailure(indent, name) {
  const depth = indent.length / 4;
  const isSubtestEnd = subtests[depth] === name;
  const path = isSubtestEnd ? subtests.slice(0, depth + 1) : [...subtests.slice(0, depth), name];
  const label = path.join(' › ');
  // A failed test's own line comes after its failed children: name only the deepest.
  if (!failures.some((f) => f.startsWith(`${label} › `))) failures.push(label);
  if (isSubtestEnd) subtests.length = depth;
}
const started = Date.now();
const LINGER_S = 3;
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    if (summary.test(line)) last = line;
    const start = subtestStart.exec(line);
    if (start) {
      subtests.length = start[1].length / 4;
      subtests.push(start[2]);
    }
    const failed = notOk.exec(line);
    if (failed) noteFailure(failed[1], failed[2]);
    const empty = emptyPlan.exec(line);
    if (empty && subtests[0] && isLabTest(subtests[0]))
      labSkips.push(`${subtests.slice(0, empty[1].length / 4).join(' › ')}: ran no assertion`);
    const skip = skipped.exec(line);
    if (skip) {
      const file = skip[1] === '' ? skip[2] : subtests[0];
      if (file && isLabTest(file))
        labSkips.push(
          `${[...subtests.slice(0, skip[1].length / 4), skip[2]].join(' › ')}: ${skip[3]} ${skip[4]}`.trim(),
        );
    }
    const test = testResult.exec(line);
    if (test) testsMs += Number(test[1]);
    const file = fileResult.exec(line);
    if (file) {
      fileTimes.push([file[1], Number(file[2]) / 1000]);
      const extra = (Number(file[2]) - testsMs) / 1000;
      if (testsMs > 0 && extra > LINGER_S) lingering.push([file[1], extra]);
      testsMs = 0;
    }
  }
});
child.on('close', (code, signal) => {
  if (summary.test(pending)) last = pending;
  const slowest = fileTimes.sort((a, b) => b[1] - a[1]).slice(0, 10);
  if (slowest.length > 0)
    console.log(`# slowest files: ${slowest.map(([f, sec]) => `${f} ${sec.toFixed(1)} s`).join(', ')}`);
  if (lingering.length > 0)
    console.log(
      `# slow to exit after their tests: ${lingering.map(([f, sec]) => `${f} +${sec.toFixed(1)} s`).join(', ')}`,
    );
  const FAILURES_SHOWN = 30;
  for (const f of failures.slice(0, FAILURES_SHOWN)) console.log(`# failed: ${f}`);
  if (failures.length > FAILURES_SHOWN) console.log(`# … and ${failures.length - FAILURES_SHOWN} more failures`);
  const refused = mustRunLab ? labSkips : [];
  for (const s of refused) console.log(`# failed: a lab test skipped where every lab test must run: ${s}`);
  if (refused.length > 0)
    console.log('# (as root or with TORUS_REQUIRE_LAB=1 every lab, e2e and jepsen test runs: install what it names)');
  console.log(`# suite wall time: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const count = (key) => Number((last ?? '').match(new RegExp(`\\b${key}: (\\d+)`))?.[1] ?? 0);
  const closing = last
    ? `${count('pass')} passed, ${count('fail') + refused.length} failed, ${count('skip') + count('todo')} skipped`
    : '0 passed, 1 failed, 0 skipped'; // tap died before its summary
  console.log(closing);
  process.exitCode = signal || refused.length > 0 ? 1 : (code ?? 1);
});
