/**
 * One confirmation measurement per new link (worker shell; the statechart is unchanged: it receives ordinary
 * `measure {sink, ip}` requests). Links are first measured while a cluster forms — every node probing and
 * measuring, processes starting — and on a shared or busy machine those numbers read low: in the e2e lab a
 * 5 Gbit/s thunderbolt link read 0.48 Gbit/s, below the 1 Gbit/s LAN beside it. Noise only ever lowers a rate
 * (and raises an RTT), so each new link is measured once more `delayMs` after the last new link was measured
 * (things have settled by then), and the better of the two samples is reported. Never continuous: a link is
 * confirmed once, and again only after it went down or was found anew (LinkUp).
 */
import { linkKey } from './links.js';

interface Sample {
  readonly bandwidthBps: number;
  readonly rttMs: number;
}

/** The one timer this needs; a test passes a clock it steps itself. */
export interface ConfirmTimer {
  set(fire: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}
const realTimer: ConfirmTimer = {
  set: (fire, ms) => setTimeout(fire, ms).unref(),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};

export class MeasurementConfirmer {
  readonly #delayMs: number;
  /** First samples of links waiting for their confirmation pass. */
  readonly #waiting = new Map<string, { sink: string; ip: string; sample: Sample }>();
  /** Links whose confirmation was requested: the first sample, to combine with the confirming one. */
  readonly #confirming = new Map<string, Sample>();
  readonly #confirmed = new Set<string>();
  readonly #clock: ConfirmTimer;
  #timer: unknown;
  #request: ((sink: string, ip: string) => void) | undefined;

  /** `delayMs` 0 turns confirmation off. */
  constructor(delayMs: number, clock: ConfirmTimer = realTimer) {
    this.#delayMs = delayMs;
    this.#clock = clock;
  }

  start(request: (sink: string, ip: string) => void): void {
    this.#request = request;
  }

  /** Every event the statechart emits. */
  observe(event: { type: string; sink?: string; ip?: string; bandwidthBps?: number; rttMs?: number }): void {
    if (this.#delayMs <= 0 || event.sink === undefined || event.ip === undefined) return;
    const key = linkKey(event.sink, event.ip);
    if (event.type === 'LinkUp' || event.type === 'LinkDown') {
      this.#waiting.delete(key);
      this.#confirming.delete(key);
      this.#confirmed.delete(key);
      return;
    }
    if (event.type !== 'LinkMeasured' || this.#confirmed.has(key) || this.#confirming.has(key)) return;
    this.#waiting.set(key, {
      sink: event.sink,
      ip: event.ip,
      sample: { bandwidthBps: event.bandwidthBps ?? 0, rttMs: event.rttMs ?? Infinity },
    });
    this.#clock.clear(this.#timer);
    this.#timer = this.#clock.set(() => this.#fire(), this.#delayMs);
  }

  /** A measurement result: a confirming sample reports the better of it and the first one. */
  combine(key: string, sample: Sample): Sample {
    const first = this.#confirming.get(key);
    if (!first) return sample;
    this.#confirming.delete(key);
    return {
      bandwidthBps: Math.max(first.bandwidthBps, sample.bandwidthBps),
      rttMs: Math.min(first.rttMs, sample.rttMs),
    };
  }

  stop(): void {
    this.#clock.clear(this.#timer);
  }

  #fire(): void {
    for (const [key, { sink, ip, sample }] of this.#waiting) {
      this.#confirmed.add(key);
      this.#confirming.set(key, sample);
      this.#request?.(sink, ip);
    }
    this.#waiting.clear();
  }
}
