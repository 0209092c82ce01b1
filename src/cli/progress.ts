/**
 * Progress of a transfer for people: on a terminal one line redrawn in place (`\r`) with percent, bytes, rate and
 * ETA, and the bound beside it (the time no schedule beats over the measured links, and what sets it); otherwise
 * (a log, a pipe) a plain line at most every `everyMs`, plus the last one, which says how far from the bound the
 * transfer ended.
 */
import { formatBytes } from './table.js';

export interface ProgressSample {
  readonly label: string;
  readonly doneBytes: number;
  readonly totalBytes: number;
  /** bytes per second */
  readonly rateBps: number;
  /** the distribution bound: seconds, and what sets it (`in: h2`, `out: h0`) */
  readonly bound?: { readonly seconds: number; readonly by: string };
  /** seconds since the transfer started (for the final line's ratio to the bound) */
  readonly elapsedSeconds?: number;
}

export function formatProgress(p: ProgressSample): string {
  const pct = p.totalBytes > 0 ? Math.floor((p.doneBytes / p.totalBytes) * 1000) / 10 : 100;
  const eta =
    p.rateBps > 0 && p.doneBytes < p.totalBytes ? `, ETA ${formatEta((p.totalBytes - p.doneBytes) / p.rateBps)}` : '';
  return `${p.label}: ${pct.toFixed(1)}% ${formatBytes(p.doneBytes)} of ${formatBytes(p.totalBytes)} at ${formatBytes(p.rateBps)}/s${eta}${formatBound(p)}`;
}

/** `, bound 8.6s (in: h2)` while it runs; `, took 9.4s: 1.09x the bound 8.6s (in: h2)` once done. */
function formatBound(p: ProgressSample): string {
  if (!p.bound || !(p.bound.seconds > 0)) return '';
  const bound = `${formatSeconds(p.bound.seconds)} (${p.bound.by})`;
  if (p.doneBytes < p.totalBytes || p.elapsedSeconds === undefined) return `, bound ${bound}`;
  return `, took ${formatSeconds(p.elapsedSeconds)}: ${(p.elapsedSeconds / p.bound.seconds).toFixed(2)}x the bound ${bound}`;
}

/** Tenths under a minute (a bound of 0.4 s is not 0 s), else as an ETA. */
export function formatSeconds(seconds: number): string {
  return seconds < 59.95 ? `${Math.max(0, seconds).toFixed(1)}s` : formatEta(seconds);
}

export function formatEta(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export class ProgressPrinter {
  #last = 0;
  #drawn = false;

  constructor(
    private readonly out: { write(s: string): unknown; isTTY?: boolean },
    private readonly everyMs = 2000,
  ) {}

  update(p: ProgressSample, now = Date.now()): void {
    if (this.out.isTTY) {
      this.out.write(`\r\x1b[2K${formatProgress(p)}`);
      this.#drawn = true;
    } else if (now - this.#last >= this.everyMs) {
      this.out.write(`${formatProgress(p)}\n`);
      this.#last = now;
    }
  }

  /** The final line (always printed). */
  done(p: ProgressSample): void {
    this.out.write(this.out.isTTY && this.#drawn ? `\r\x1b[2K${formatProgress(p)}\n` : `${formatProgress(p)}\n`);
  }
}
