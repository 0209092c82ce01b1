// waitForState follows applied events (a real EventFeed), checks only on relevant ones, reads answers from events,
// checks again when the feed says the state was replaced (snapshot installs skip events), and times out with the
// caller's error.
import t from 'tap';
import { EventFeed } from '../../src/api/event-feed.js';
import type { ClusterEvent } from '../../src/protocols/events.js';
import { waitForState } from '../../src/api/wait-for-state.js';

let index = 0;
const append = (feed: EventFeed, event: ClusterEvent): void =>
  feed.append({ index: ++index, term: 1, event, at: Date.now() });
const gone = (nodeId: string): ClusterEvent => ({ type: 'NodeGone', nodeId, reason: 'test' });
const isGone =
  (nodeId: string) =>
  (e: ClusterEvent): boolean =>
    e.type === 'NodeGone' && e.nodeId === nodeId;

t.test('answers at once when the condition already holds', async (t) => {
  const feed = new EventFeed();
  let checks = 0;
  const v = await waitForState(feed, {
    afterIndex: feed.lastIndex,
    relevant: () => true,
    check: async () => {
      checks++;
      return 'ready';
    },
    timeoutMs: 1_000,
    onTimeout: () => new Error('late'),
  });
  t.equal(v, 'ready');
  t.equal(checks, 1);
  t.equal(feed.subscribers, 0, 'no subscription left behind');
});

t.test('checks again only after relevant events', async (t) => {
  const feed = new EventFeed();
  let done = false;
  let checks = 0;
  const waiting = waitForState(feed, {
    afterIndex: feed.lastIndex,
    relevant: isGone('x'),
    check: async () => {
      checks++;
      return done ? 'done' : undefined;
    },
    timeoutMs: 5_000,
    onTimeout: () => new Error('late'),
  });
  await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < 50; i++) append(feed, gone(`other-${i}`));
  await new Promise((r) => setTimeout(r, 20));
  t.equal(checks, 1, 'irrelevant events cost no check');
  done = true;
  append(feed, gone('x'));
  t.equal(await waiting, 'done');
  t.equal(checks, 2);
  t.equal(feed.subscribers, 0);
});

t.test('an event applied between the command and the wait is not missed', async (t) => {
  const feed = new EventFeed();
  const before = feed.lastIndex;
  append(feed, gone('early')); // the command's effect arrives before the wait starts
  const v = await waitForState(feed, {
    afterIndex: before,
    relevant: isGone('early'),
    fromEvent: (e) => (e.type === 'NodeGone' ? e.nodeId : undefined),
    check: async () => undefined,
    timeoutMs: 1_000,
    onTimeout: () => new Error('late'),
  });
  t.equal(v, 'early', 'answered from the event itself');
});

t.test('a change with no event (snapshot install) is found when the feed says the state was replaced', async (t) => {
  const feed = new EventFeed();
  let done = false;
  let checks = 0;
  const waiting = waitForState(feed, {
    afterIndex: 0,
    relevant: () => false,
    check: async () => {
      checks++;
      return done ? 'seen' : undefined;
    },
    timeoutMs: 5_000,
    onTimeout: () => new Error('late'),
  });
  await new Promise((r) => setTimeout(r, 100));
  t.equal(checks, 1, 'nothing polls while nothing happens');
  done = true;
  feed.replaced();
  t.equal(await waiting, 'seen');
  t.equal(checks, 2);
  t.equal(feed.subscribers, 0);
});

t.test('a waiter the feed dropped (it fell behind) checks and follows the feed again', async (t) => {
  const feed = new EventFeed({ maxQueued: 3 });
  let done = false;
  const waiting = waitForState(feed, {
    afterIndex: feed.lastIndex,
    relevant: isGone('z'),
    check: async () => (done ? 'caught up' : undefined),
    timeoutMs: 5_000,
    onTimeout: () => new Error('late'),
  });
  for (let i = 0; i < 10; i++) append(feed, gone(`burst-${i}`)); // more than the waiter may queue
  await new Promise((r) => setTimeout(r, 20));
  done = true;
  append(feed, gone('z'));
  t.equal(await waiting, 'caught up');
  t.equal(feed.subscribers, 0);
});

t.test('times out with the caller error; a check that throws ends the wait with its error', async (t) => {
  const feed = new EventFeed();
  await t.rejects(
    waitForState(feed, {
      afterIndex: 0,
      relevant: () => true,
      check: async () => undefined,
      timeoutMs: 150,
      onTimeout: () => new Error('not ready in time'),
    }),
    /not ready in time/,
  );
  let n = 0;
  const failing = waitForState(feed, {
    afterIndex: feed.lastIndex,
    relevant: () => true,
    check: async () => {
      if (++n > 1) throw new Error('runner failed');
      return undefined;
    },
    timeoutMs: 5_000,
    onTimeout: () => new Error('late'),
  });
  append(feed, gone('y'));
  await t.rejects(failing, /runner failed/);
  t.equal(feed.subscribers, 0);
});
