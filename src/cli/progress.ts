/**
 * Progress of a transfer for people: on a terminal one line redrawn in place (`\r`) with percent, bytes, rate and
 * ETA; otherwise (a log, a pipe) a plain line at most every `everyMs`, plus the last one.
 */
import { formatBytes } from './table.js';

export interface ProgressSample {
  readonly label: string;
  readonly doneBytes: number;
  readonly totalBytes: number;
  /** bytes per second */
  readonly rateBps: number;
}

export function formatProgress(p: ProgressSample): string {
  const pct = p.totalBytes > 0 ? Math.floor((p.doneBytes / p.totalBytes) * 1000) / 10 : 100;
  const eta =
    p.rateBps > 0 && p.doneBytes < p.totalBytes ? `, ETA ${formatEta((p.totalBytes - p.doneBytes) / p.rateBps)}` : '';
  return `${p.label}: ${pct.toFixed(1)}% ${formatBytes(p.doneBytes)} of ${formatBytes(p.totalBytes)} at ${formatBytes(p.rateBps)}/s${eta}`;
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
