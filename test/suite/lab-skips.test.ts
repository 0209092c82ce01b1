/**
 * Where every lab test must run (as root, or with TORUS_REQUIRE_LAB=1 as CI sets it), `npm test`'s summary
 * (scripts/tap-summary.mjs) fails the run on any skip in a lab-set file and names it, however the test skipped;
 * a unit-set skip stays a skip. test/fixtures/skip-or-fail.ts, the way lab tests skip, fails there at once.
 * The fixtures are real tap files (named *.tap.ts so that the suite itself does not run them).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const fixture = (name: string): string => `test/suite/fixtures/${name}`;

t.test('a lab-set skip fails the run where lab tests must run; a unit skip does not', async (t) => {
  const run = spawnSync(
    process.execPath,
    [
      'scripts/tap-summary.mjs',
      fixture('skips-its-own-way-lab.tap.ts'),
      fixture('skips-whole-file-lab.tap.ts'),
      fixture('skip-or-fail-lab.tap.ts'),
      fixture('unit-skip.tap.ts'),
    ],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, TORUS_REQUIRE_LAB: '1' }, timeout: 120_000 },
  );
  const failed = run.stdout.split('\n').filter((l) => l.startsWith('# failed: '));
  t.equal(run.status, 1, 'the run fails');
  const refused = (file: string, rest: string) =>
    `# failed: a lab test skipped where every lab test must run: ${fixture(file)}${rest}`;
  t.same(
    failed.filter((l) => l.includes('a lab test skipped')).sort(),
    [
      refused('skips-its-own-way-lab.tap.ts', ' › plan(0): SKIP skipped: plan zero'),
      refused('skips-its-own-way-lab.tap.ts', ' › skip option: SKIP skip option'),
      refused('skips-its-own-way-lab.tap.ts', ' › skipped assertion › an assertion: SKIP assertion skip'),
      refused('skips-its-own-way-lab.tap.ts', ' › returns early: ran no assertion'),
      refused('skips-whole-file-lab.tap.ts', ': SKIP skipped: the whole file'),
      refused('skip-or-fail-lab.tap.ts', ' › needs a tool: SKIP skipped: frobnicate not found (Debian package frob)'),
    ].sort(),
    'every lab-set skip is named, however it was made; the unit skip is not',
  );
  t.match(
    failed.filter((l) => l.includes('must run here')).sort(),
    [
      /skip-or-fail-lab\.tap\.ts › has a part that needs a tool › the frob part: must run here .*Debian package frob/,
      /skip-or-fail-lab\.tap\.ts › must run here .*frobnicate not found \(Debian package frob\)/,
    ],
    'the skip-or-fail helper fails at once, naming the package',
  );
  t.match(run.stdout, /\n\d+ passed, [1-9]\d* failed, \d+ skipped\n/, 'the closing line counts them as failures');
});
