/**
 * Waits for the replicated state to reach a condition by following applied events, not by polling the keeper:
 * the condition is checked once, then again after each applied event the caller marks as relevant. A slow
 * safety check also runs, because a node that installs a snapshot (catch-up) skips the events in it.
 */
import type { EventFeed } from './event-feed.js';
import type { ClusterEvent } from '../protocols/events.js';

export interface WaitForStateOptions<T> {
  /** Applied events after this index are considered (take it before the command that causes them). */
  readonly afterIndex: number;
  /** Which applied events can change the answer. */
  readonly relevant: (event: ClusterEvent) => boolean;
  /** The condition: a value ends the wait; undefined waits on; a throw ends it with that error. */
  readonly check: () => Promise<T | undefined>;
  /** An answer read straight from a relevant event, without asking anyone (optional). */
  readonly fromEvent?: (event: ClusterEvent) => T | undefined;
  readonly timeoutMs: number;
  readonly onTimeout: () => Error;
  readonly safetyCheckMs?: number;
}

const SAFETY_CHECK_MS = 2_000;

export async function waitForState<T>(feed: EventFeed, options: WaitForStateOptions<T>): Promise<T> {
  const controller = new AbortController();
  const iterator = feed.events(options.afterIndex, controller.signal)[Symbol.asyncIterator]();
  const deadline = Date.now() + options.timeoutMs;
  let pending: Promise<IteratorResult<{ event: ClusterEvent }>> | undefined;
  let feedOpen = true;
  let timer: NodeJS.Timeout | undefined;
  try {
    let answer: T | undefined = await options.check();
    for (;;) {
      if (answer !== undefined) return answer;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw options.onTimeout();
      // Keep one next() outstanding across rounds: a tick must not drop an event the iterator is about to give.
      if (feedOpen) pending ??= iterator.next();
      const tick = new Promise<'tick'>((resolve) => {
        timer = setTimeout(() => resolve('tick'), Math.min(remaining, options.safetyCheckMs ?? SAFETY_CHECK_MS));
      });
      const next = await (pending ? Promise.race([pending, tick]) : tick);
      clearTimeout(timer);
      if (next === 'tick') {
        answer = await options.check();
        continue;
      }
      pending = undefined;
      if (next.done) {
        feedOpen = false; // the feed dropped us (we fell far behind): the safety checks carry on alone
        answer = await options.check();
        continue;
      }
      if (!options.relevant(next.value.event)) continue;
      const fromEvent = options.fromEvent?.(next.value.event);
      answer = fromEvent !== undefined ? fromEvent : await options.check();
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
    void iterator.return?.(undefined);
  }
}
