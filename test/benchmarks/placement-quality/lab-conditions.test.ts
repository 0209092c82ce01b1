import t from 'tap';
import { errorSplit, runConditions } from '../../../benchmarks/placement-quality/lab-stats.js';

// The lab prints the figures the docs quote: the error through the slow host and without it, the run's length
// and the load it ran under. None of them is worked out by hand from the table.
t.test('error split: median |error| of a group of options and of the rest', async (t) => {
  const rows = [
    { key: 'a,far', measuredMs: 102, predictedMs: 100 }, // 2 %
    { key: 'b,far', measuredMs: 97, predictedMs: 100 }, // 3 %
    { key: 'c,far', measuredMs: 110, predictedMs: 100 }, // 10 %
    { key: 'a,b', measuredMs: 60, predictedMs: 50 }, // 20 %
    { key: 'b,c', measuredMs: 45, predictedMs: 50 }, // 10 %
  ];
  t.same(
    errorSplit(rows, (key) => key.includes('far')),
    { group: { options: 3, medianAbsErrorPercent: 3 }, rest: { options: 2, medianAbsErrorPercent: 15 } },
  );
  const none = errorSplit(rows, () => false);
  t.equal(none.group.options, 0);
  t.ok(Number.isNaN(none.group.medianAbsErrorPercent), 'an empty group has no median');
});

t.test('run conditions: minutes and the load range', async (t) => {
  t.equal(
    runConditions(0, 576_000, [1.74, 2.08, 1.9]),
    'ran 9.6 min; load average 1.7–2.1 (1-minute, sampled at 3 points)',
  );
  t.equal(runConditions(0, 60_000, [3, 3]), 'ran 1.0 min; load average 3.0 (1-minute, sampled at 2 points)');
  t.equal(runConditions(0, 30_000, []), 'ran 0.5 min');
});
