/**
 * The writing side of a runner stream (log-segments.ts): appends to the newest file, starts a new one when it
 * would pass `maxFileBytes` (cut after the last whole line that fits, so files begin at a line), and removes the
 * oldest files beyond `maxFiles`. On disk a stream never holds more than maxFiles × maxFileBytes.
 *
 * A Writable, so the child's pipe is paused while the disk is behind (memory stays bounded by the high-water
 * mark). A write that fails (a full disk, an I/O error, a file that cannot be opened) drops that piece of output and
 * the stream goes on: the job must not die of its log, and the supervisor must not either. What is dropped is never
 * silent: it is counted (`droppedBytes`), reported to `onDropped` (the supervisor logs and counts it for /metrics),
 * and the log itself says so where the gap is: the next write that succeeds begins with a line
 * `… N bytes of output could not be written (CODE: why) …`, which every reader of the log (the logs route) sees.
 * After a failure the file is opened again for the next write, so a freed disk or a replaced file takes the output
 * again. Written by hand: the rotating-file libraries on npm rename
 * files on rotation (`out.log` → `out.log.1`), which a reader following by name cannot tell from a truncation.
 */
import { chmod, open, unlink, type FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import type { LogRotation } from '../../../protocols/log-rotation.js';
import { listSegments, segmentName, sizeOf, type LogStream, type Segment } from '../shared/log-segments.js';

interface Current {
  readonly base: number;
  readonly file: FileHandle;
  size: number;
}

/** Called for each piece of output that could not be written, with the error that lost it. */
export type OnDropped = (bytes: number, error: Error) => void;

export class RotatingLog extends Writable {
  readonly #dir: string;
  readonly #stream: LogStream;
  readonly #rotation: LogRotation;
  readonly #onDropped: OnDropped | undefined;
  #current: Current | undefined;
  #segments: Segment[] | undefined;
  #dropped = 0;
  /** Dropped since the log last said so, and the last error that dropped output. */
  #unsaid = 0;
  #lastError: Error | undefined;
  /** Bytes of the chunk being written that reached the file. */
  #written = 0;
  /** Bytes of output done with (in the file, or dropped and counted), and who waits for a count. */
  #settled = 0;
  #settledWaiters: Array<{ readonly bytes: number; readonly resolve: () => void }> = [];
  #atLineStart = true;

  constructor(dir: string, stream: LogStream, rotation: LogRotation, onDropped?: OnDropped) {
    super({ highWaterMark: 1024 * 1024 });
    this.#dir = dir;
    this.#stream = stream;
    this.#rotation = rotation;
    this.#onDropped = onDropped;
  }

  /** Bytes of output that could not be written (write errors). */
  get droppedBytes(): number {
    return this.#dropped;
  }

  /** Resolves once this many bytes of output are done with (in the file, or dropped and said), or the log is closed. */
  settled(bytes: number): Promise<void> {
    if (this.#settled >= bytes || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.#settledWaiters.push({ bytes, resolve }));
  }

  #settle(bytes: number): void {
    this.#settled += bytes;
    const due = this.#settledWaiters.filter((w) => w.bytes <= this.#settled);
    if (due.length === 0) return;
    this.#settledWaiters = this.#settledWaiters.filter((w) => w.bytes > this.#settled);
    for (const w of due) w.resolve();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.#written = 0;
    this.#sayDropped()
      .then(() => this.#append(chunk, true))
      .then(
        () => {
          this.#settle(chunk.length);
          done();
        },
        (error: unknown) => {
          this.#drop(chunk.length - this.#written, error);
          this.#settle(chunk.length);
          done();
        },
      );
  }

  override _final(done: (error?: Error | null) => void): void {
    // Output dropped at the very end: the log says so if the file takes a line now.
    this.#sayDropped()
      .catch(() => {})
      .then(() => this.#closeCurrent())
      .then(
        () => done(),
        () => done(),
      );
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    for (const w of this.#settledWaiters.splice(0)) w.resolve(); // nothing more will come
    this.#closeCurrent().then(
      () => done(error),
      () => done(error),
    );
  }

  #drop(bytes: number, error: unknown): void {
    if (bytes <= 0) return;
    const e = error instanceof Error ? error : new Error(String(error));
    this.#dropped += bytes;
    this.#unsaid += bytes;
    this.#lastError = e;
    void this.#closeCurrent(); // the next write opens the file again
    this.#onDropped?.(bytes, e);
  }

  /** Writes the notice of what was dropped since the last one, if anything was; throws if the file refuses it. */
  async #sayDropped(): Promise<void> {
    if (this.#unsaid === 0) return;
    const unsaid = this.#unsaid;
    const e = this.#lastError as NodeJS.ErrnoException | undefined;
    const why = e ? `${e.code ? `${e.code}: ` : ''}${e.message}` : 'unknown error';
    const notice = `${this.#atLineStart ? '' : '\n'}… ${unsaid} bytes of output could not be written (${why}) …\n`;
    await this.#append(Buffer.from(notice), false);
    this.#unsaid -= unsaid;
  }

  async #append(chunk: Buffer, output: boolean): Promise<void> {
    let rest = chunk;
    while (rest.length > 0) {
      const current = this.#current ?? (await this.#openNewest());
      const room = this.#rotation.maxFileBytes - current.size;
      let piece = rest;
      if (rest.length > room) {
        const cut = room > 0 ? rest.lastIndexOf(0x0a, room - 1) : -1;
        if (cut >= 0) piece = rest.subarray(0, cut + 1);
        else if (current.size > 0) {
          await this.#rotate(current); // the line does not fit: it starts the next file
          continue;
        } else piece = rest.subarray(0, room); // a line longer than a whole file is cut
      }
      await this.#writeAll(current, piece, output);
      rest = rest.subarray(piece.length);
      if (current.size >= this.#rotation.maxFileBytes && rest.length > 0) await this.#rotate(current);
    }
  }

  /** Writes all of `piece` or throws; what reached the file is counted in #written when it is output. */
  async #writeAll(current: Current, piece: Buffer, output: boolean): Promise<void> {
    let at = 0;
    while (at < piece.length) {
      const { bytesWritten } = await current.file.write(piece, at, piece.length - at);
      if (bytesWritten <= 0) throw new Error(`a write of ${piece.length - at} bytes wrote none`);
      at += bytesWritten;
      current.size += bytesWritten;
      if (output) this.#written += bytesWritten;
      this.#atLineStart = piece[at - 1] === 0x0a;
    }
  }

  /** The newest file of the stream (a restarted runner appends to it), or the first one. */
  async #openNewest(): Promise<Current> {
    this.#segments ??= await listSegments(this.#dir, this.#stream);
    const last = this.#segments.at(-1);
    if (last) {
      this.#current = { base: last.base, file: await open(last.path, 'a', 0o600), size: await sizeOf(last.path) };
      return this.#current;
    }
    return this.#openAt(0);
  }

  async #openAt(base: number): Promise<Current> {
    const path = join(this.#dir, segmentName(this.#stream, base));
    const file = await open(path, 'a', 0o600);
    await chmod(path, 0o600).catch(() => {}); // an older file may have been 0644
    this.#segments = [...(this.#segments ?? []), { base, path }];
    this.#current = { base, file, size: 0 };
    return this.#current;
  }

  async #rotate(current: Current): Promise<void> {
    await this.#closeCurrent();
    // Room first, then the new file: at no moment does the stream hold more than maxFiles files.
    const segments = this.#segments ?? [];
    while (segments.length >= this.#rotation.maxFiles) {
      const oldest = segments.shift();
      if (oldest) await unlink(oldest.path).catch(() => {}); // already gone: nothing to free
    }
    await this.#openAt(current.base + current.size);
  }

  async #closeCurrent(): Promise<void> {
    const current = this.#current;
    this.#current = undefined;
    await current?.file.close().catch(() => {});
  }
}
