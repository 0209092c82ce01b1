// Requests waiting for replies behind one timer: deadlines, earlier deadlines re-arming, take, rejectWhere, clear.
import t from 'tap';
import { PendingRequests } from '../../src/runtime/pending-requests.js';
import { sleep } from './helpers.js';

function waiter(
  table: PendingRequests<string>,
  corr: number,
  timeoutMs: number,
  meta = 'a',
): { outcome: Promise<string>; at: number } {
  const at = performance.now();
  const outcome = new Promise<string>((resolve) => {
    table.add(corr, timeoutMs, {
      resolve: (v) => resolve(`ok:${String(v)}`),
      reject: (e) => resolve(`err:${(e as Error).message}`),
      timeoutError: () => new Error(`timeout ${corr}`),
      meta,
    });
  });
  return { outcome, at };
}

t.test('each request times out at its own deadline, earliest first even when added last', async (t) => {
  const table = new PendingRequests<string>();
  const slow = waiter(table, 1, 400);
  const fast = waiter(table, 2, 60);
  const order: string[] = [];
  const done = Promise.all([slow.outcome.then((v) => order.push(v)), fast.outcome.then((v) => order.push(v))]);
  await done;
  t.same(order, ['err:timeout 2', 'err:timeout 1']);
  t.equal(table.size, 0);
});

t.test('a deadline is not met early and not missed by much', async (t) => {
  const table = new PendingRequests<string>();
  const w = waiter(table, 1, 120);
  t.equal(await w.outcome, 'err:timeout 1');
  const elapsed = performance.now() - w.at;
  t.ok(elapsed >= 118, `not early (${elapsed.toFixed(0)} ms)`);
});

t.test('take settles a request once; a late take finds nothing', async (t) => {
  const table = new PendingRequests<string>();
  const w = waiter(table, 7, 5_000);
  const entry = table.take(7);
  t.ok(entry);
  entry?.resolve('reply');
  t.equal(await w.outcome, 'ok:reply');
  t.equal(table.take(7), undefined);
  t.equal(table.size, 0);
  table.clear(() => new Error('unused'));
});

t.test('rejectWhere fails only matching requests; clear fails the rest', async (t) => {
  const table = new PendingRequests<string>();
  const a1 = waiter(table, 1, 5_000, 'alpha');
  const b1 = waiter(table, 2, 5_000, 'beta');
  const a2 = waiter(table, 3, 5_000, 'alpha');
  t.equal(
    table.rejectWhere(
      (m) => m === 'alpha',
      () => new Error('alpha down'),
    ),
    2,
  );
  t.equal(await a1.outcome, 'err:alpha down');
  t.equal(await a2.outcome, 'err:alpha down');
  t.equal(table.size, 1);
  table.clear(() => new Error('shutting down'));
  t.equal(await b1.outcome, 'err:shutting down');
});

t.test('settled requests leave no timer holding the process, and a later request still times out', async (t) => {
  const table = new PendingRequests<string>();
  for (let corr = 1; corr <= 100; corr++) {
    waiter(table, corr, 10_000);
    table.take(corr)?.resolve(null);
  }
  t.equal(table.size, 0);
  const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const idle = timers();
  waiter(table, 100, 10_000);
  t.equal(timers(), idle + 1, 'a waiting request keeps the process alive');
  table.take(100);
  t.equal(timers(), idle, 'nothing waits: the timer no longer keeps the process alive');
  await sleep(10);
  const w = waiter(table, 101, 50);
  t.equal(await w.outcome, 'err:timeout 101', 'the armed (10 s) timer was re-armed for the earlier deadline');
});
