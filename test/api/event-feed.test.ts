import t from 'tap';
import { EventFeed } from '../../src/api/event-feed.js';
import type { ClusterEvent } from '../../src/protocols/events.js';

const ev = (index: number) => ({
  index,
  term: 1,
  event: { type: 'NodeGone', nodeId: `n${index}`, reason: 'x' } as ClusterEvent,
});

t.test('retained then live, in order; stale appends ignored; abort ends the iterator', async (t) => {
  const feed = new EventFeed({ retain: 3 });
  for (let i = 1; i <= 5; i++) feed.append(ev(i));
  feed.append(ev(4)); // stale: ignored
  t.equal(feed.lastIndex, 5);
  const abort = new AbortController();
  const seen: number[] = [];
  const done = (async () => {
    for await (const e of feed.events(1, abort.signal)) {
      seen.push(e.index);
      if (e.index === 7) abort.abort();
    }
  })();
  await new Promise((r) => setTimeout(r, 10));
  feed.append(ev(6));
  feed.append(ev(7));
  await done;
  t.same(seen, [3, 4, 5, 6, 7], 'starts at the oldest retained (the API reports the gap)');
  t.equal(feed.subscribers, 0);
});

t.test('an abort while waiting returns promptly', async (t) => {
  const feed = new EventFeed();
  const abort = new AbortController();
  const done = (async () => {
    for await (const _ of feed.events(0, abort.signal)) t.fail('nothing was appended');
  })();
  setTimeout(() => abort.abort(), 20);
  await done;
  t.equal(feed.subscribers, 0);
});

t.test('a client that falls too far behind is ended', async (t) => {
  const feed = new EventFeed({ retain: 100, maxQueued: 10 });
  for (let i = 1; i <= 50; i++) feed.append(ev(i));
  const seen: number[] = [];
  for await (const e of feed.events(0, new AbortController().signal)) seen.push(e.index);
  t.same(seen, [], 'ended at once; it reconnects with Last-Event-ID');
});

t.test('large events: the buffer stays within its byte budget and keeps the newest', async (t) => {
  const budget = 64 * 1024;
  const feed = new EventFeed({ retain: 10_000, retainBytes: budget });
  const large = (index: number) => ({ ...ev(index), event: { ...ev(index).event, blob: 'b'.repeat(10_000) } });
  let peak = 0;
  for (let i = 1; i <= 100; i++) {
    feed.append(large(i) as ReturnType<typeof ev>);
    peak = Math.max(peak, feed.retainedBytes);
  }
  t.ok(peak <= budget, `at most ${peak} bytes held (budget ${budget})`);
  const abort = new AbortController();
  const seen: number[] = [];
  for await (const e of feed.events(0, abort.signal)) {
    seen.push(e.index);
    if (e.index === 100) abort.abort();
  }
  t.ok(seen.length >= 5 && seen.length < 100, `${seen.length} of the newest events kept`);
  t.equal(seen.at(-1), 100, 'ending with the newest');
  t.same(
    seen,
    Array.from({ length: seen.length }, (_, i) => 100 - seen.length + 1 + i),
    'consecutive',
  );
  const lone = new EventFeed({ retainBytes: 10 });
  lone.append(large(1) as ReturnType<typeof ev>);
  t.equal(lone.retainedBytes > 10, true, 'one event over the budget is still kept for live clients');
});

t.test('a connected client that falls behind the retained events is ended, never silently skipped ahead', async (t) => {
  const feed = new EventFeed({ retain: 3 });
  feed.append(ev(1));
  const abort = new AbortController();
  const seen: number[] = [];
  const iterator = feed.events(0, abort.signal);
  seen.push((await iterator.next()).value!.index);
  for (let i = 2; i <= 10; i++) feed.append(ev(i)); // 2..7 are gone before it reads again
  for await (const e of { [Symbol.asyncIterator]: () => iterator }) seen.push(e.index);
  t.same(seen, [1], 'ended after 1: it reconnects with Last-Event-ID 1 and is told of the gap');
});
