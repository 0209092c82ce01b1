import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parseBenchRingArgs } from '../../../src/cli/bench-ring.js';

// `bench ring` runs in a namespace lab or on loopback; a running cluster is `bench ring --live`. There is no
// third mode that parses and then fails later.
t.test('--mode cluster is refused at parse time, pointing to bench ring --live', async (t) => {
  t.throws(
    () => parseBenchRingArgs(['--mode', 'cluster']),
    /--mode: lab or loopback \(the live cluster is `bench ring --live`\)/,
  );
  t.equal(parseBenchRingArgs(['--mode', 'loopback']).mode, 'loopback');
  t.equal(parseBenchRingArgs(['--mode', 'lab']).mode, 'lab');
});

t.test('the command exits 2 with the usage and runs nothing', async (t) => {
  const main = fileURLToPath(new URL('../../../dist/main.js', import.meta.url));
  const r = spawnSync(process.execPath, [main, 'bench', 'ring', '--mode', 'cluster'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.equal(r.status, 2, r.stderr);
  t.match(r.stderr, /--mode: lab or loopback \(the live cluster is `bench ring --live`\)/);
  t.match(r.stderr, /usage: torus bench ring \[--mode lab\|loopback\]/);
  t.notMatch(r.stderr, /not wired/);
  t.equal(r.stdout, '');
});
