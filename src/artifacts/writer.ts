/**
 * Receiving one artifact into the store: files created at their final size, each chunk verified (SHA-256) before
 * it is written, written with `pwrite` at its offset; the written chunks are made durable in batches (one
 * fdatasync per file every FLUSH_BYTES or FLUSH_MS, and before the artifact is complete) and only then recorded in
 * the `verified.log` journal (uint32 LE chunk indices). A transfer that is cut, or a node that is killed, resumes
 * from the journal: only chunks whose bytes were on disk before their entry was appended count as held, so a kill
 * loses at most the chunks written since the last completed sync (≤ 2 × FLUSH_BYTES) plus those in flight. A sync per
 * 4 MiB chunk ran the disk at a quarter of what batched syncs reach (and a chain of k nodes on one disk k times over).
 * A sync runs while the transfer goes on (the chunk that filled the batch does not wait for it); a write waits only
 * when the previous sync is still running, i.e. the disk is behind the network. A failed sync fails the next write
 * and `finish` with its cause (the chunks of that batch are not journaled: a resume fetches them again).
 * Chunks are written with O_DIRECT where they can be (a page-aligned buffer, a length and an offset that are
 * multiples of 4 KiB, a filesystem that takes it): the bytes go from the buffer to the disk without the page-cache
 * copy, which was most of a receiver's CPU (into freshly allocated cache pages, each a fault on this VM: 2.9 ms of
 * kernel time per MiB against 0.04 direct, measured). The rest (a file's last chunk) goes through the cache.
 * Waiters (a downstream node of a broadcast chain asking for chunk i) are woken as soon as chunk i is verified and
 * written, after `onWritten` saw it (the service keeps the buffer to forward it): serving it needs no
 * durability, the downstream verifies it again.
 * `have` marks chunks verified and written (servable); `count` / `haveBytes` count the durable (journaled) ones.
 * A transfer of a pipeline stage's chunks (docs/artifacts.md, "Models") sets a `target`: `targetCount` /
 * `targetBytes` count the durable chunks among it, its progress.
 */
import { open, type FileHandle } from 'node:fs/promises';
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { TorusError } from '../protocols/errors.js';
import { inlineHasher, type ChunkHasher } from './chunk-hasher.js';
import { chunkRefs, type ChunkRef, type Manifest } from './manifest.js';
import { writeFileAtomicSync } from '../native/durable-fs.js';
import { artifactPaths, writeInfo, type ArtifactInfo } from './layout.js';
import { fitsDirect, openDirect } from '../native/aligned-memory.js';

/** Sync the written chunks once this many bytes are pending, or FLUSH_MS after the first pending one. */
export const FLUSH_BYTES = 32 * 1024 * 1024;
export const FLUSH_MS = 500;

export interface WriterOptions {
  /** the timed sync's delay (tests set a long one to see the size-driven syncs alone) */
  readonly flushMs?: number;
  /** how chunks are hashed to verify them (default: inline) */
  readonly hash?: ChunkHasher;
  /**
   * Called with each chunk once it is verified and written, before its waiters wake. True: it kept the buffer
   * (`write` then resolves true and the caller must not reuse it).
   */
  readonly onWritten?: (index: number, data: Uint8Array) => boolean;
}

export class ArtifactWriter {
  readonly id: string;
  readonly manifest: Manifest;
  readonly refs: readonly ChunkRef[];
  readonly have: Uint8Array;
  #count = 0;
  #haveBytes = 0;
  /** the chunks a stage transfer wants (undefined: every chunk), and the durable ones among them */
  #target: Uint8Array | undefined;
  #targetCount = 0;
  #targetBytes = 0;
  readonly #paths: ReturnType<typeof artifactPaths>;
  readonly #handles = new Map<number, Promise<FileHandle>>();
  /** per file: an O_DIRECT handle, or undefined where the filesystem refuses O_DIRECT */
  readonly #directHandles = new Map<number, Promise<FileHandle | undefined>>();
  /** chunks written with O_DIRECT, and through the page cache */
  readonly writes = { direct: 0, cached: 0 };
  readonly #waiters = new Map<number, Set<() => void>>();
  #journal: number | undefined;
  #closed = false;
  /** verified and written, not yet synced and journaled */
  #pending: number[] = [];
  #pendingBytes = 0;
  #flushing: Promise<void> = Promise.resolve();
  /** syncs started and not yet ended */
  #syncing = 0;
  /** the first failed sync's error: every later write and `finish` throw it */
  #failed: unknown;
  #flushTimer: NodeJS.Timeout | undefined;

  readonly flushMs: number;
  readonly #hash: ChunkHasher;
  readonly #onWritten: ((index: number, data: Uint8Array) => boolean) | undefined;

  private constructor(root: string, id: string, manifest: Manifest, o: WriterOptions) {
    this.flushMs = o.flushMs ?? FLUSH_MS;
    this.#hash = o.hash ?? inlineHasher;
    this.#onWritten = o.onWritten;
    this.id = id;
    this.manifest = manifest;
    this.refs = chunkRefs(manifest);
    this.have = new Uint8Array(this.refs.length);
    this.#paths = artifactPaths(root, id);
  }

  /** Opens (creating or resuming) the partial artifact `id` whose manifest is `manifestBytes` (already verified). */
  static create(
    root: string,
    id: string,
    manifest: Manifest,
    manifestBytes: Uint8Array,
    info: Omit<ArtifactInfo, 'complete'>,
    o: WriterOptions = {},
  ): ArtifactWriter {
    const w = new ArtifactWriter(root, id, manifest, o);
    const p = w.#paths;
    mkdirSync(p.files, { recursive: true, mode: 0o700 });
    if (!existsSync(p.manifest)) writeFileAtomicSync(p.manifest, manifestBytes);
    if (!existsSync(p.info)) writeInfo(p.info, { ...info, complete: false });
    for (const f of manifest.files) {
      const abs = join(p.files, f.path);
      mkdirSync(dirname(abs), { recursive: true, mode: 0o700 });
      // 'a' creates without truncating: chunks already written survive a resume. Sized up front (a sparse file), so
      // no write extends it: ext4 serializes direct writes past the end of a file.
      const fd = openSync(abs, 'a', 0o600);
      try {
        if (fstatSync(fd).size < f.size) ftruncateSync(fd, f.size);
      } finally {
        closeSync(fd);
      }
    }
    if (existsSync(p.journal)) {
      const raw = readFileSync(p.journal);
      for (let o = 0; o + 4 <= raw.length; o += 4) w.#mark(raw.readUInt32LE(o));
    }
    w.#journal = openSync(p.journal, 'a', 0o600);
    return w;
  }

  get count(): number {
    return this.#count;
  }
  get haveBytes(): number {
    return this.#haveBytes;
  }
  get complete(): boolean {
    return this.#count === this.refs.length;
  }

  /** The chunks a transfer wants now (undefined: the whole artifact); counts the durable ones among them. */
  setTarget(target: Uint8Array | undefined): void {
    this.#target = target;
    const pending = new Set(this.#pending);
    this.#targetCount = 0;
    this.#targetBytes = 0;
    for (let i = 0; i < this.refs.length; i++)
      if (this.have[i] && !pending.has(i) && (!target || target[i])) {
        this.#targetCount++;
        this.#targetBytes += this.refs[i]!.length;
      }
  }
  get targetCount(): number {
    return this.#target ? this.#targetCount : this.#count;
  }
  get targetBytes(): number {
    return this.#target ? this.#targetBytes : this.#haveBytes;
  }

  /** From the journal at open: durable, hence also servable. */
  #mark(index: number): void {
    const ref = this.refs[index];
    if (!ref || this.have[index]) return;
    this.have[index] = 1;
    this.#count++;
    this.#haveBytes += ref.length;
  }

  #handle(file: number): Promise<FileHandle> {
    let h = this.#handles.get(file);
    if (!h) {
      h = open(join(this.#paths.files, this.manifest.files[file]!.path), 'r+');
      this.#handles.set(file, h);
    }
    return h;
  }

  #directHandle(file: number): Promise<FileHandle | undefined> {
    let h = this.#directHandles.get(file);
    if (!h) {
      h = openDirect(join(this.#paths.files, this.manifest.files[file]!.path), constants.O_RDWR);
      this.#directHandles.set(file, h);
    }
    return h;
  }

  /** Writes `data` at `offset` of file `file`: O_DIRECT when the buffer, length and offset allow it. */
  async #put(file: number, offset: number, data: Uint8Array): Promise<void> {
    const direct = fitsDirect(data, offset) ? await this.#directHandle(file) : undefined;
    let fh = direct ?? (await this.#handle(file));
    let done = 0;
    while (done < data.byteLength) {
      try {
        done += (await fh.write(data, done, data.byteLength - done, offset + done)).bytesWritten;
      } catch (error) {
        // A device with a larger block than ALIGN refuses the write as a whole: the cache takes it (and the rest).
        if (fh !== direct || (error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
        this.#directHandles.set(file, Promise.resolve(undefined));
        void direct.close().catch(() => {});
        fh = await this.#handle(file);
      }
    }
    if (fh === direct) this.writes.direct++;
    else this.writes.cached++;
  }

  /**
   * Verifies and stores chunk `index`; a wrong hash throws TORUS_ARTIFACT_CORRUPT and writes nothing. Resolves true
   * when `onWritten` kept `data` (the caller must then leave it alone), false when `data` is still the caller's.
   */
  async write(index: number, data: Uint8Array): Promise<boolean> {
    const ref = this.refs[index];
    if (!ref) throw new TorusError('TORUS_API_VALIDATION', `chunk ${index} out of range`);
    if (this.#failed !== undefined) throw this.#failed;
    if (data.byteLength !== ref.length || (await this.#hash(data)) !== ref.hash) {
      throw new TorusError('TORUS_ARTIFACT_CORRUPT', `chunk ${index} of ${this.id} failed verification`, {
        index,
        expected: ref.hash,
      });
    }
    if (this.have[index] || this.#closed) return false;
    await this.#put(ref.file, ref.offset, data);
    if (this.have[index] || this.#closed) return false;
    const kept = this.#onWritten?.(index, data) ?? false;
    this.have[index] = 1;
    this.#pending.push(index);
    this.#pendingBytes += ref.length;
    const waiters = this.#waiters.get(index);
    this.#waiters.delete(index);
    for (const wake of waiters ?? []) wake();
    if (this.#pendingBytes >= FLUSH_BYTES) {
      const behind = this.#syncing > 0;
      // A failed sync is recorded in #failed: the next write and `finish` throw it (this chunk is written).
      const sync = this.flush().catch(() => {});
      if (behind) await sync;
    } else
      this.#flushTimer ??= setTimeout(() => {
        this.#flushTimer = undefined;
        void this.flush().catch(() => {});
      }, this.flushMs);
    return kept;
  }

  /**
   * Makes every written chunk durable (fdatasync of each file they are in), then journals them: the journal never
   * names a chunk whose bytes could still be lost. Syncs run one at a time, in order.
   */
  flush(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#syncing++;
    const run = this.#flushing
      .then(async () => {
        const batch = this.#pending;
        if (batch.length === 0 || this.#journal === undefined) return;
        this.#pending = [];
        this.#pendingBytes = 0;
        const files = new Set(batch.map((i) => this.refs[i]!.file));
        // One fdatasync per file covers both handles: O_DIRECT skips the page cache, not the device's write cache nor
        // the file's block map, and the sync flushes those for the inode whichever descriptor asks.
        await Promise.all([...files].map(async (f) => (await this.#handle(f)).datasync()));
        if (this.#journal === undefined) return;
        const entries = Buffer.alloc(4 * batch.length);
        batch.forEach((index, k) => entries.writeUInt32LE(index, 4 * k));
        writeSync(this.#journal, entries);
        for (const index of batch) {
          this.#count++;
          this.#haveBytes += this.refs[index]!.length;
          if (this.#target?.[index]) {
            this.#targetCount++;
            this.#targetBytes += this.refs[index]!.length;
          }
        }
      })
      .finally(() => {
        this.#syncing--;
      });
    this.#flushing = run.catch((error: unknown) => {
      this.#failed ??= error;
    });
    return run;
  }

  /** Resolves true once chunk `index` is held, false after `ms` (or when the writer closes). */
  waitFor(index: number, ms: number): Promise<boolean> {
    if (this.have[index]) return Promise.resolve(true);
    if (this.#closed || ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const set = this.#waiters.get(index) ?? new Set();
      this.#waiters.set(index, set);
      const wake = (): void => {
        clearTimeout(timer);
        set.delete(wake);
        resolve(!!this.have[index]);
      };
      const timer = setTimeout(wake, ms);
      set.add(wake);
    });
  }

  /** All chunks held: final modes, info `complete`, the journal removed. */
  async finish(): Promise<void> {
    await this.flush();
    if (this.#failed !== undefined) throw this.#failed;
    if (!this.complete)
      throw new TorusError(
        'TORUS_INTERNAL',
        `finish of ${this.id} with ${this.refs.length - this.#count} chunks missing`,
      );
    await this.close();
    this.manifest.files.forEach((f) => chmodSync(join(this.#paths.files, f.path), f.mode));
    const { stage: _whole, ...info } = JSON.parse(readFileSync(this.#paths.info, 'utf8')) as ArtifactInfo;
    writeInfo(this.#paths.info, { ...info, complete: true });
    rmSync(this.#paths.journal, { force: true });
  }

  /** Closes files and the journal; wakes every waiter (they see the chunk missing). */
  async close(): Promise<void> {
    if (this.#closed) return;
    // What was verified and written is kept for a resume: synced and journaled before the files close.
    await this.flush().catch(() => {});
    this.#closed = true;
    if (this.#journal !== undefined) closeSync(this.#journal);
    this.#journal = undefined;
    for (const set of this.#waiters.values()) for (const wake of [...set]) wake();
    this.#waiters.clear();
    const handles: Promise<FileHandle | undefined>[] = [...this.#handles.values(), ...this.#directHandles.values()];
    this.#handles.clear();
    this.#directHandles.clear();
    await Promise.all(handles.map(async (h) => (await h.catch(() => undefined))?.close()));
  }
}
