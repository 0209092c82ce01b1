/**
 * The live benchmark's task timing (timed-collective.ts) on a loopback ring: every op exact, mean/median/p99/min
 * reported and ordered, nccl-tests sizes and bus factors, the task's `bidirectional` in force for that task only,
 * bad percentiles and an aborted task handled.
 */
import t from 'tap';
import { busFactor, percentile, timedCollective, type TimedOp } from '../../src/ring/timed-collective.js';
import { loopbackRing } from './fixtures/helpers.js';

t.test('percentile and bus factors', async (t) => {
  const xs = Array.from({ length: 100 }, (_, i) => i + 1);
  t.equal(percentile(xs, 50), 50);
  t.equal(percentile(xs, 99), 99);
  t.equal(percentile([7], 99), 7);
  t.equal(percentile([], 50), 0);
  t.equal(busFactor('all-reduce', 4), 1.5);
  t.equal(busFactor('all-gather', 4), 0.75);
  t.equal(busFactor('broadcast', 4), 1);
});

t.test('every op: exact, with mean, median, p99 and min per op; bidirectional per task', async (t) => {
  const comms = await loopbackRing(3, { bidirectional: 'auto' });
  t.teardown(() => Promise.all(comms.map((c) => c.close())));
  const run = (op: TimedOp, extra: Record<string, unknown> = {}) =>
    Promise.all(
      comms.map((c) =>
        timedCollective(c, {
          op,
          count: 100_003,
          dtype: 'float32',
          reduce: 'sum',
          root: 1,
          iters: 6,
          warmup: 1,
          ...extra,
        }),
      ),
    );
  for (const op of ['all-reduce', 'all-gather', 'broadcast', 'send-recv'] as const) {
    const results = await run(op);
    for (const r of results) {
      t.equal(r.wrong, 0, `${op}: exact on rank`);
      t.ok(
        r.minUs > 0 && r.minUs <= r.medianUs && r.medianUs <= r.p99Us,
        `${op}: min ${r.minUs} ≤ median ${r.medianUs} ≤ p99 ${r.p99Us} µs`,
      );
      t.ok(
        r.timeUs > 0 && r.algbw > 0 && r.busbw > 0 && r.busbwMedian > 0,
        `${op}: mean ${r.timeUs} µs, busbw ${r.busbw.toFixed(3)} GB/s`,
      );
      t.equal(r.bytes, 100_003 * 4 * (op === 'all-gather' ? 3 : 1), `${op}: nccl-tests size`);
      t.equal(r.bidirectional, false, `${op}: loopback 'auto' is one direction`);
    }
  }
  const both = await run('all-reduce', { bidirectional: true });
  t.ok(
    both.every((r) => r.bidirectional && r.wrong === 0),
    'a task asking for both directions gets them, exact',
  );
  t.same(
    comms.map((c) => c.options.bidirectional),
    [false, false, false],
    'and the setting is restored after the task',
  );
  const f16 = await Promise.all(
    comms.map((c) =>
      timedCollective(c, {
        op: 'all-reduce',
        count: 999,
        dtype: 'float16',
        reduce: 'max',
        root: 0,
        iters: 2,
        warmup: 0,
      }),
    ),
  );
  t.ok(
    f16.every((r) => r.wrong === 0),
    'float16 max exact',
  );
});

t.test("an aborted task rejects with the signal's reason", async (t) => {
  const comms = await loopbackRing(2);
  t.teardown(() => Promise.all(comms.map((c) => c.close())));
  const ac = new AbortController();
  ac.abort(new Error('stop'));
  await t.rejects(
    timedCollective(
      comms[0]!,
      { op: 'all-reduce', count: 10, dtype: 'int32', reduce: 'sum', root: 0, iters: 1, warmup: 0 },
      ac.signal,
    ),
    { message: 'stop' },
  );
});
