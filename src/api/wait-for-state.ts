/**
 * Waits for the replicated state to reach a condition by following applied events, not by polling the keeper:
 * the condition is checked once, then again after each applied event the caller marks as relevant, and after the
 * feed says the state was replaced (a snapshot install brings a state without its events). A feed that dropped the
 * waiter (it fell far behind) is checked once and followed again from where the feed now is.
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
}

export async function waitForState<T>(feed: EventFeed, options: WaitForStateOptions<T>): Promise<T> {
  const controller = new AbortController();
  let iterator = feed.events(options.afterIndex, controller.signal)[Symbol.asyncIterator]();
  const deadline = Date.now() + options.timeoutMs;
  let pending: Promise<IteratorResult<{ event: ClusterEvent }>> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let wakeReplaced: (() => void) | undefined;
  let replacedSeen = false;
  const unsubscribe = feed.onReplaced(() => {
    replacedSeen = true;
    wakeReplaced?.();
  });
  try {
    let answer: T | undefined = await options.check();
    for (;;) {
      if (answer !== undefined) return answer;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw options.onTimeout();
      if (replacedSeen) {
        replacedSeen = false;
        answer = await options.check();
        continue;
      }
      // Keep one next() outstanding across rounds: a wake-up must not drop an event the iterator is about to give.
      pending ??= iterator.next();
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), remaining);
      });
      const replaced = new Promise<'replaced'>((resolve) => {
        wakeReplaced = () => resolve('replaced');
      });
      const next = await Promise.race([pending, late, replaced]);
      clearTimeout(timer);
      wakeReplaced = undefined;
      if (next === 'late') throw options.onTimeout();
      if (next === 'replaced') continue;
      pending = undefined;
      if (next.done) {
        // The feed dropped us (we fell far behind): check once, then follow it again from where it is now.
        iterator = feed.events(feed.lastIndex, controller.signal)[Symbol.asyncIterator]();
        answer = await options.check();
        continue;
      }
      if (!options.relevant(next.value.event)) continue;
      const fromEvent = options.fromEvent?.(next.value.event);
      answer = fromEvent !== undefined ? fromEvent : await options.check();
    }
  } finally {
    clearTimeout(timer);
    unsubscribe();
    controller.abort();
    void iterator.return?.(undefined);
  }
}
