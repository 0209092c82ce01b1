import t from 'tap';
import { errorPercent, median, summarize } from '../../../benchmarks/placement-quality/lab-stats.js';

t.test('error and median', async (t) => {
  t.equal(errorPercent(110, 100), 10);
  t.equal(errorPercent(90, 100), -10);
  t.equal(median([3, 1, 2]), 2);
  t.equal(median([4, 1, 3, 2]), 2.5);
  t.ok(Number.isNaN(median([])));
});

t.test('summary: median |error|, the chosen option against the best measured and against exo', async (t) => {
  const rows = [
    { key: 'a,b', measuredMs: 60, predictedMs: 50 }, // +20 %
    { key: 'b,c,d', measuredMs: 19, predictedMs: 20 }, // −5 %
    { key: 'a,b,c,d', measuredMs: 18, predictedMs: 20 }, // −10 %
  ];
  const s = summarize(rows, 'b,c,d', 'a,b');
  t.equal(s.options, 3);
  t.equal(s.medianAbsErrorPercent, 10);
  t.equal(s.worstAbsErrorPercent, 20);
  t.equal(s.best.key, 'a,b,c,d');
  t.equal(+(s.chosenGapPercent as number).toFixed(3), 5.556, 'chosen 19 ms vs best 18 ms');
  t.equal(+(s.vsExo as number).toFixed(3), 3.158, "exo's 60 ms step ÷ the chosen 19 ms: tokens/s ratio");
  t.equal(summarize(rows, 'a,b,c,d', undefined).chosenGapPercent, 0, 'the chosen one is the best');
  t.equal(summarize(rows, 'x', undefined).vsExo, null, 'no exo option, no ratio');
  t.throws(() => summarize([], 'x', undefined), /no measured options/);
});
