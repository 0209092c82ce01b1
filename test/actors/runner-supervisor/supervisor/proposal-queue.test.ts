/**
 * The supervisor's proposals: what queues while one is in flight goes in the next, in order; a failed batch is
 * retried one event at a time, so an event the leader refuses holds back only itself and what follows it.
 */
import t from 'tap';
import { ProposalQueue } from '../../../../src/actors/runner-supervisor/supervisor/proposal-queue.js';

/** A cluster whose proposals answer when the test says so. */
function manualCluster(refuse: (e: string) => boolean = () => false) {
  const sent: string[][] = [];
  const pending: (() => void)[] = [];
  const send = (events: readonly string[]): Promise<void> => {
    sent.push([...events]);
    return new Promise((resolve, reject) =>
      pending.push(() => (events.some(refuse) ? reject(new Error('refused')) : resolve())),
    );
  };
  const answer = async (): Promise<void> => {
    pending.shift()?.();
    // Let the queue see the answer and send its next proposal.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return { sent, send, answer };
}

t.test('statuses reported while a proposal is in flight go together in the next one, in order', async (t) => {
  const c = manualCluster();
  let committed = 0;
  const q = new ProposalQueue<string>({ send: c.send, stopping: () => false, onSent: (n) => (committed += n) });
  q.push('Connecting');
  for (const s of ['Connected', 'Loading', 'Loaded', 'WarmingUp', 'Ready']) q.push(s);
  t.same(c.sent, [['Connecting']], 'the first goes at once, alone');
  await c.answer();
  t.same(c.sent[1], ['Connected', 'Loading', 'Loaded', 'WarmingUp', 'Ready'], 'the rest in one proposal');
  await c.answer();
  t.equal(c.sent.length, 2);
  t.equal(committed, 6);
  t.equal(q.length, 0);
});

t.test('a batch never exceeds maxBatch', async (t) => {
  const c = manualCluster();
  const q = new ProposalQueue<string>({ send: c.send, stopping: () => false, maxBatch: 2 });
  for (const s of ['a', 'b', 'c', 'd', 'e']) q.push(s);
  await c.answer();
  await c.answer();
  await c.answer();
  t.same(c.sent, [['a'], ['b', 'c'], ['d', 'e']]);
});

t.test('a refused batch is retried one event at a time: the events before the refused one go through', async (t) => {
  const refused = new Set(['bad']);
  const c = manualCluster((e) => refused.has(e));
  const failures: unknown[] = [];
  const q = new ProposalQueue<string>({ send: c.send, stopping: () => false, onFailed: (e) => failures.push(e) });
  q.push('first');
  q.push('ok');
  q.push('bad');
  await c.answer(); // 'first' commits; ['ok', 'bad'] goes next
  t.same(c.sent[1], ['ok', 'bad']);
  await c.answer(); // refused: retried after the backoff, alone
  t.equal(failures.length, 1);
  await new Promise((r) => setTimeout(r, 300));
  t.same(c.sent[2], ['ok'], 'the event before the refused one, alone');
  refused.clear();
  await c.answer();
  t.same(c.sent[3], ['bad'], 'then the next, batching again');
  await c.answer();
  t.equal(q.length, 0);
});

t.test('past maxQueued the oldest queued event is dropped', async (t) => {
  const c = manualCluster();
  const q = new ProposalQueue<string>({ send: c.send, stopping: () => false, maxQueued: 2 });
  q.push('a'); // in flight
  q.push('b');
  q.push('c');
  q.push('d'); // drops b
  await c.answer();
  t.same(c.sent[1], ['c', 'd']);
});
