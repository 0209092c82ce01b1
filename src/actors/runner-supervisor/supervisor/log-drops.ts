/**
 * Runner output that could not be written to its log files (rotating-log.ts), as the node reports it: counted in
 * bytes per stream since the actor started (/metrics: torus_runner_log_dropped_bytes_total), and logged as a
 * warning at most once per `everyMs` for each runner's stream, with the bytes dropped since its last warning, so a
 * full disk under a chatty job says so without flooding the node's own log (which may be on the same disk).
 */
import type { Logger } from '../../../runtime/log.js';
import type { LogStream } from '../shared/log-segments.js';

/** Warning times kept for this many runner streams before the stale ones are let go. */
const MAX_TRACKED = 256;

export class LogDrops {
  readonly #log: Logger;
  readonly #everyMs: number;
  readonly #now: () => number;
  readonly #totals: Record<LogStream, number> = { stdout: 0, stderr: 0 };
  /** Per runner stream: when it last warned, and what it dropped since. */
  readonly #recent = new Map<string, { warnedAt: number; unsaid: number }>();

  constructor(log: Logger, everyMs = 60_000, now: () => number = Date.now) {
    this.#log = log;
    this.#everyMs = everyMs;
    this.#now = now;
  }

  note(runnerId: string, stream: LogStream, bytes: number, error: Error): void {
    this.#totals[stream] += bytes;
    const key = `${runnerId}\u0000${stream}`;
    const now = this.#now();
    const seen = this.#recent.get(key);
    if (seen && now - seen.warnedAt < this.#everyMs) {
      seen.unsaid += bytes;
      return;
    }
    const code = (error as NodeJS.ErrnoException).code;
    this.#log.warn("runner output dropped: it could not be written to the runner's log", {
      runnerId,
      stream,
      bytes: bytes + (seen?.unsaid ?? 0),
      ...(code ? { code } : {}),
      error: error.message,
    });
    this.#recent.delete(key);
    this.#recent.set(key, { warnedAt: now, unsaid: 0 });
    if (this.#recent.size > MAX_TRACKED)
      for (const [k, v] of this.#recent) if (now - v.warnedAt >= this.#everyMs) this.#recent.delete(k);
  }

  /** Bytes dropped since the actor started, per stream. */
  totals(): Readonly<Record<LogStream, number>> {
    return { ...this.#totals };
  }
}
