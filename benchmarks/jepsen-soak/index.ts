/**
 * The long Jepsen-style schedule: 5 standalone cluster processes in a lab, a seeded schedule of faults
 * (isolate the leader, cut 2 of 5, flap a link, kill -9 and restart a node) while one client per node creates and
 * deletes; the checker then requires every acknowledged write on every node, committed logs that agree, one
 * leader per term and one digest. `npm test` runs a 4-fault schedule (test/jepsen/cluster.test.ts); this runs
 * many more, several seeds in a row, and exits 1 on the first violation (replay it with --seed).
 *   npm run bench -- jepsen-soak --seed 7 --minutes 5     one seeded schedule of about 5 minutes
 *   node build/benchmarks/jepsen-soak/index.js [--quick] [--json] [--seed N] [--seeds K] [--minutes M | --faults N] [--gap-ms MS]
 * `--minutes M` sets the faults per seed to fill M minutes at one fault every `--gap-ms` (default 9000), one seed
 * unless --seeds says otherwise.
 */
import { parseArgs } from 'node:util';
import { Lab } from '../../src/lab/index.js';
import { runJepsen } from '../../test/jepsen/run.js';
import { printTable, type BenchRow } from '../table.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    json: { type: 'boolean' },
    seed: { type: 'string' },
    seeds: { type: 'string' },
    faults: { type: 'string' },
    minutes: { type: 'string' },
    'gap-ms': { type: 'string' },
  },
  strict: true,
});
const quick = values.quick === true;
const firstSeed = Number(values.seed ?? Date.now() % 100_000);
const minutes = values.minutes === undefined ? undefined : Number(values.minutes);
if (minutes !== undefined && !(minutes > 0 && minutes <= 24 * 60))
  throw new Error(`--minutes: expected a number of minutes above 0, got ${values.minutes}`);
if (minutes !== undefined && values.faults !== undefined)
  throw new Error('--minutes and --faults both set the schedule length: give one');
const seeds = Number(values.seeds ?? (quick || minutes !== undefined ? 1 : 3));
const gapMs = Number(values['gap-ms'] ?? 9000);
const faults =
  minutes !== undefined
    ? Math.max(1, Math.round((minutes * 60_000) / gapMs))
    : Number(values.faults ?? (quick ? 4 : 16));
for (const [name, v] of Object.entries({ seed: firstSeed, seeds, faults, 'gap-ms': gapMs })) {
  if (!Number.isInteger(v) || v < 0 || (name !== 'seed' && v < 1))
    throw new Error(`--${name}: expected a positive integer, got ${v}`);
}

const why = Lab.unavailableReason();
if (why) {
  process.stderr.write(`jepsen-soak skipped: ${why}\n`);
  process.exit(0);
}

const rows: BenchRow[] = [];
let violations = 0;
for (let s = 0; s < seeds && violations === 0; s++) {
  const seed = firstSeed + s;
  const lab = await Lab.create({ hosts: 5 });
  const t0 = Date.now();
  try {
    process.stderr.write(
      `seed ${seed}: ${faults} faults, ${gapMs} ms apart (about ${Math.round((faults * gapMs) / 1000)} s)\n`,
    );
    const r = await runJepsen(lab, {
      seed,
      hosts: 5,
      faults,
      gapMs,
      log: (line) => process.stderr.write(`  ${line}\n`),
    });
    violations += r.problems.length;
    rows.push({
      seed,
      faults,
      'writes attempted': r.attempted,
      acknowledged: r.stats.acked ?? 0,
      'terms with a leader': r.stats.terms ?? 0,
      violations: r.problems.length,
      seconds: Math.round((Date.now() - t0) / 1000),
    });
    for (const p of r.problems) process.stderr.write(`  VIOLATION: ${p}\n`);
  } finally {
    await lab.teardown();
  }
}
printTable(
  'Jepsen soak: acknowledged writes under partitions and kill -9 (5 lab nodes)',
  rows,
  values.json === true,
  'Every acknowledged write must be on every node at the end; committed logs agree; one leader per term; one digest.',
);
process.exitCode = violations === 0 ? 0 : 1;
