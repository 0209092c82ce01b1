/**
 * Reads a runner stream (log-segments.ts) from a stream offset on, file after file, as the writer rotates them.
 * It moves to the next file only at the offset that file starts at, so no byte is read twice or skipped while it
 * is on disk; a file held open keeps its bytes even once rotation removes it. When the reader finds the bytes it
 * wants already removed, it says so once, as a line of its own (`… N bytes rotated away …`), and goes on from
 * the oldest file left.
 *
 * A file is finished only when a newer one exists *and* a read after that listing finds nothing more: the writer
 * may append and rotate between a read that found the end and the listing that follows it, and those bytes are
 * still in the older file.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { listSegments, type LogStream, type Segment } from '../shared/log-segments.js';

/** How the reader lists the stream's files; a seam so a test can interleave a writer at the exact moment. */
export type ListSegments = (dir: string, stream: LogStream) => Promise<Segment[]>;

/** The file being read, and the stream offset its first byte has. */
interface OpenSegment {
  readonly base: number;
  readonly handle: FileHandle;
}

const CHUNK = 64 * 1024;
const EMPTY = new Uint8Array(0);

export function rotatedAwayNotice(bytes: number): string {
  return `… ${bytes} bytes rotated away …\n`;
}

export class StreamReader {
  readonly #dir: string;
  readonly #stream: LogStream;
  #pos: number;
  #file: OpenSegment | undefined;
  /** Whether the last byte handed out ended a line (a notice must start on its own line). */
  #atLineStart = true;
  readonly #list: ListSegments;

  constructor(dir: string, stream: LogStream, from: number, list: ListSegments = listSegments) {
    this.#dir = dir;
    this.#stream = stream;
    this.#pos = from;
    this.#list = list;
  }

  /** The stream offset of the next byte to read. */
  get position(): number {
    return this.#pos;
  }

  /** The next bytes (or a rotated-away notice); empty when nothing new is on disk yet. */
  async next(): Promise<Uint8Array> {
    for (let attempt = 0; attempt < 8; attempt++) {
      if (!this.#file) {
        const notice = await this.#seek();
        if (notice) return notice;
        if (!this.#file) return EMPTY;
      }
      const file: OpenSegment = this.#file;
      const read = await this.#read(file);
      if (read) return read;
      // Nothing more for now. The file is finished once a newer one exists (the writer starts one only after its
      // last write to this one completed), but it may have appended between that read and this listing: read once
      // more after seeing the newer file, and move on only when that read is empty too.
      const newer = (await this.#list(this.#dir, this.#stream)).find((s) => s.base > file.base);
      if (!newer) return EMPTY;
      const last = await this.#read(file);
      if (last) return last;
      await this.close();
      if (newer.base > this.#pos) return this.#skipTo(newer.base); // the file ended short of where the next begins
    }
    return EMPTY;
  }

  /** The next bytes of `file` at the reader's position, or undefined when it holds no more for now. */
  async #read(file: OpenSegment): Promise<Uint8Array | undefined> {
    const buffer = Buffer.alloc(CHUNK);
    const { bytesRead } = await file.handle.read(buffer, 0, CHUNK, this.#pos - file.base);
    if (bytesRead === 0) return undefined;
    this.#pos += bytesRead;
    this.#atLineStart = buffer[bytesRead - 1] === 0x0a;
    return buffer.subarray(0, bytesRead);
  }

  async close(): Promise<void> {
    const file = this.#file;
    this.#file = undefined;
    await file?.handle.close().catch(() => {});
  }

  #skipTo(offset: number): Uint8Array {
    const text = `${this.#atLineStart ? '' : '\n'}${rotatedAwayNotice(offset - this.#pos)}`;
    this.#pos = offset;
    this.#atLineStart = true;
    return Buffer.from(text);
  }

  /** Opens the file holding `pos`; answers a notice when what `pos` names was removed already. */
  async #seek(): Promise<Uint8Array | undefined> {
    for (let attempt = 0; attempt < 8; attempt++) {
      const segments = await this.#list(this.#dir, this.#stream);
      const oldest = segments[0];
      if (!oldest) return undefined;
      if (this.#pos < oldest.base) return this.#skipTo(oldest.base);
      const holder = segments.filter((s) => s.base <= this.#pos).at(-1) ?? oldest;
      try {
        this.#file = { base: holder.base, handle: await open(holder.path, 'r') };
        return undefined;
      } catch {
        // removed between the listing and the open: list again
      }
    }
    return undefined;
  }
}
