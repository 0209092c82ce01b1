/**
 * Group commit for ClusterNode: one fsync after the current turn of the event loop covers every entry written
 * meanwhile; only then does a follower acknowledge, or the leader count its own copy (`onDurable`).
 */
import type { Logger } from '../../../runtime/log.js';

export interface GroupFlushOptions {
  /** The fsync; returns the index the saved log now holds durably (throws when it cannot). */
  readonly flush: () => number;
  readonly onDurable: (index: number) => void;
  readonly stopped: () => boolean;
  readonly log: Logger;
}

export class GroupFlush {
  readonly #o: GroupFlushOptions;
  #scheduled = false;

  constructor(options: GroupFlushOptions) {
    this.#o = options;
  }

  schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      if (this.#o.stopped()) return;
      let index: number;
      try {
        index = this.#o.flush();
      } catch (err) {
        this.#o.log.error('cannot fsync the cluster log; entries are not acknowledged', { err });
        return;
      }
      this.#o.onDurable(index);
    });
  }
}
