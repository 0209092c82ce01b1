/**
 * The byte copies of a shard directory (shard-writer.ts) without the page cache: the store's copy of a model was
 * written with O_DIRECT (writer.ts), so it is not in the cache, and writing a stage's hundreds of MiB through
 * the cache into fresh pages, then syncing them, ran at a fraction of what direct I/O does on the same disk (the
 * model-start benchmark showed 15 s from a stage's last chunk to its runner, most of it this copy). Reads take
 * aligned blocks around a range and keep the part asked for; the output is gathered in an aligned buffer written
 * at aligned offsets, its tail padded to the alignment and the file then cut to its size. Where a filesystem refuses
 * O_DIRECT (tmpfs, some FUSE; or a read/write answers EINVAL) the same calls go through the page cache.
 */
import { closeSync, constants, openSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { TorusError } from '../../protocols/errors.js';
import { ALIGN, alignedBuffer, isAligned, openDirect } from '../../native/aligned-memory.js';

const BLOCK = 4 * 1024 * 1024;

const isEinval = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'EINVAL';

/** What one block read gave: `got` bytes of the file from byte `from`, in `buf`. */
interface Block {
  readonly buf: Buffer;
  readonly from: number;
  readonly got: number;
}

/**
 * A source file read in byte ranges, direct where it can be. The next block is read while the sink takes the one
 * before (two buffers): a copy then runs at the slower of the disk's reads and writes, not at their sum.
 */
export class RangeReader {
  readonly #bufs = [alignedBuffer(BLOCK), alignedBuffer(BLOCK)] as const;
  private constructor(
    readonly path: string,
    private direct: FileHandle | undefined,
    private cached: FileHandle | undefined,
  ) {}

  static async open(path: string): Promise<RangeReader> {
    const direct = await openDirect(path, constants.O_RDONLY);
    return new RangeReader(path, direct, direct ? undefined : await open(path, 'r'));
  }

  /** Hands bytes [begin, end) of the file to `sink` in order, in pieces (each valid only during the call). */
  async copy(begin: number, end: number, sink: (piece: Uint8Array) => Promise<void>): Promise<void> {
    let at = begin;
    let turn = 0;
    let pending = at < end ? this.#read(this.#bufs[0], at, end) : undefined;
    while (pending) {
      const { buf, from, got } = await pending;
      const stop = Math.min(end, from + got);
      if (stop <= at) throw new TorusError('TORUS_MODEL_INVALID', `short read at byte ${at} of ${this.path}`);
      turn ^= 1;
      // The other buffer: the one the sink had last time, which it has given back.
      pending = stop < end ? this.#read(turn === 0 ? this.#bufs[0] : this.#bufs[1], stop, end) : undefined;
      try {
        await sink(buf.subarray(at - from, stop - from));
      } catch (error) {
        await pending?.catch(() => {});
        throw error;
      }
      at = stop;
    }
  }

  /** One block from byte `at` (direct: from the aligned offset before it) into `buf`; EINVAL drops direct I/O. */
  async #read(buf: Buffer, at: number, end: number): Promise<Block> {
    for (;;) {
      const useDirect = this.direct !== undefined && isAligned(buf);
      const from = useDirect ? at - (at % ALIGN) : at;
      const want = useDirect ? BLOCK : Math.min(BLOCK, end - at);
      try {
        const fh = useDirect ? this.direct! : await this.#cachedHandle();
        return { buf, from, got: (await fh.read(buf, 0, want, from)).bytesRead };
      } catch (error) {
        if (!useDirect || !isEinval(error)) throw error;
        await this.#dropDirect();
      }
    }
  }

  async #cachedHandle(): Promise<FileHandle> {
    this.cached ??= await open(this.path, 'r');
    return this.cached;
  }

  async #dropDirect(): Promise<void> {
    const d = this.direct;
    this.direct = undefined;
    await d?.close().catch(() => {});
  }

  async close(): Promise<void> {
    const handles = [this.direct, this.cached];
    this.direct = this.cached = undefined;
    await Promise.all(handles.map((h) => h?.close()));
  }
}

/** A new file written front to back, direct where it can be; `finish` makes it durable at its exact size. */
export class SequentialWriter {
  readonly #buf = alignedBuffer(BLOCK);
  #fill = 0;
  /** bytes of the file already written (a multiple of BLOCK while direct) */
  #written = 0;
  private constructor(
    readonly path: string,
    private direct: FileHandle | undefined,
    private cached: FileHandle,
  ) {}

  static async create(path: string): Promise<SequentialWriter> {
    closeSync(openSync(path, 'wx', 0o644));
    const direct = await openDirect(path, constants.O_WRONLY);
    return new SequentialWriter(path, direct, await open(path, 'r+'));
  }

  async append(bytes: Uint8Array): Promise<void> {
    for (let at = 0; at < bytes.byteLength; ) {
      const n = Math.min(BLOCK - this.#fill, bytes.byteLength - at);
      this.#buf.set(bytes.subarray(at, at + n), this.#fill);
      this.#fill += n;
      at += n;
      if (this.#fill === BLOCK) {
        await this.#flush(BLOCK);
        this.#written += BLOCK;
        this.#fill = 0;
      }
    }
  }

  /** Writes the buffer's first `length` bytes (a multiple of ALIGN when direct) at the end of what is written. */
  async #flush(length: number): Promise<void> {
    let done = 0;
    while (done < length) {
      const direct = this.direct !== undefined && isAligned(this.#buf);
      try {
        const fh = direct ? this.direct! : this.cached;
        done += (await fh.write(this.#buf, done, length - done, this.#written + done)).bytesWritten;
      } catch (error) {
        if (!direct || !isEinval(error)) throw error;
        const d = this.direct;
        this.direct = undefined;
        await d?.close().catch(() => {});
      }
    }
  }

  /** The rest written (padded to ALIGN when direct, the file then cut to its size), synced, closed. */
  async finish(): Promise<number> {
    const size = this.#written + this.#fill;
    if (this.#fill > 0) {
      const padded = this.direct ? Math.ceil(this.#fill / ALIGN) * ALIGN : this.#fill;
      this.#buf.fill(0, this.#fill, padded);
      await this.#flush(padded);
      await this.cached.truncate(size);
    }
    await this.cached.datasync();
    await this.close();
    return size;
  }

  #closed = false;
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([this.direct?.close(), this.cached.close()]);
  }
}
