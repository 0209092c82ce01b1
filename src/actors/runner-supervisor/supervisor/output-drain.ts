/**
 * How a runner's output reaches its log files before its ends are reported. At the runner's exit: the pipes are read
 * to their end and the files finished (logsWritten). At a command's end, the runner still up: the pipes are read
 * empty at once (takeWaiting).
 *
 * takeWaiting: takes in, at once, what a child's output pipe holds. A runner reports a command's end on its frame channel, while
 * the command wrote into the stdout/stderr pipes directly; the two are read on separate paths, so the report can
 * come first. Every byte the command wrote before it exited is in the pipe by then (its writes had returned), so
 * reading the pipe until it is empty, now, takes all of it; it is pushed behind what the stream already buffers,
 * in order. What a process the command left behind writes later is not waited for.
 */
import { readSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';

const CHUNK = 64 * 1024;

/** The pipe's file descriptor under a child's stdio stream (a libuv pipe, non-blocking), if it is still open. */
function fdOf(stream: Readable): number | undefined {
  const fd = (stream as unknown as { _handle?: { fd?: number } | null })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

/** Reads the pipe under `stream` until it is empty (or ended) and pushes what it read into the stream. */
export function takeWaiting(stream: Readable): void {
  if (stream.readableEnded || stream.destroyed) return;
  const fd = fdOf(stream);
  if (fd === undefined) return;
  for (;;) {
    const buffer = Buffer.allocUnsafe(CHUNK);
    let n: number;
    try {
      n = readSync(fd, buffer, 0, CHUNK, null);
    } catch {
      return; // EAGAIN: empty now (or an error the stream's own read will report)
    }
    if (n === 0) return; // the writers are gone: the stream's own read sees the end
    stream.push(buffer.subarray(0, n));
  }
}

/**
 * Resolves once the streams have ended and the logs have written everything to disk; at most `boundMs`, after which
 * the logs are ended with what arrived.
 */
export async function logsWritten(
  streams: ReadonlyArray<Readable | null | undefined>,
  logs: readonly Writable[],
  boundMs: number,
): Promise<void> {
  const bound = new Promise<void>((resolve) => setTimeout(resolve, boundMs).unref());
  const ended = streams.map((stream) =>
    !stream || stream.readableEnded || stream.destroyed
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          stream.once('end', () => resolve());
          stream.once('close', () => resolve());
        }),
  );
  await Promise.race([Promise.all(ended), bound]);
  const written = logs.map(
    (log) =>
      new Promise<void>((resolve) => {
        if (log.writableFinished || log.destroyed) return resolve();
        log.once('finish', () => resolve());
        log.once('close', () => resolve());
        log.once('error', () => resolve());
        if (!log.writableEnded) log.end(); // the pipe ended it already when the child's side closed
      }),
  );
  await Promise.race([Promise.all(written), bound]);
}
