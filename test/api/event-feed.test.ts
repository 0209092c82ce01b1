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
