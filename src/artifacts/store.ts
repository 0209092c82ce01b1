/**
 * The content-addressed store of one node (layout.ts): list, add (from a user's file or directory), remove,
 * export (`get --to`), read a chunk (to serve it) and free space. Adding links the user's bytes into the store
 * instead of copying them where the filesystem allows: a reflink (copy-on-write clone) first, else a hard link
 * (same inode: editing the original afterwards changes the stored bytes, which peers then refuse as corrupt),
 * else a plain copy. The hashes are computed on the store's copy, so what is recorded is what is served.
 */
import {
  constants,
  copyFileSync,
  existsSync,
  statSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { open, rename, chmod, statfs, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { TorusError } from '../protocols/errors.js';
import { writeFileAtomicSync } from '../native/durable-fs.js';
import { hashFileChunks, scanSource } from './chunker.js';
import { DEFAULT_CHUNK_SIZE, isHex64, sha256Hex } from './ids.js';
import {
  chunkRefs,
  decodeManifest,
  encodeManifest,
  totalBytes,
  MANIFEST_VERSION,
  type ChunkRef,
  type Manifest,
} from './manifest.js';
import { artifactPaths, readInfo, writeInfo, type ArtifactInfo } from './layout.js';
import { ChunkBufferPool } from './chunk-buffers.js';
import { fitsDirect, openDirect } from '../native/aligned-memory.js';
import { readModelDir } from './model/model-reader.js';
import { MODEL_FILE, writeModelFile } from './model/model-store.js';
import { modelChunkSize } from './model/model-chunk-size.js';
import type { ModelRecord } from '../protocols/model-record.js';

/** A file kept open for serving chunks is closed after this long without a read. */
const READ_IDLE_MS = 5000;

export type LinkMethod = 'reflink' | 'hardlink' | 'copy';

export interface LocalArtifact {
  readonly id: string;
  readonly name: string;
  readonly bytes: number;
  readonly chunks: number;
  readonly chunkSize: number;
  readonly files: number;
  readonly complete: boolean;
  readonly addedAt: number;
}

/** An artifact in the store that cannot be served: its info or manifest does not verify. */
export interface DamagedArtifact {
  readonly id: string;
  readonly name?: string;
  readonly reason: string;
}

export interface AddResult extends LocalArtifact {
  /** how each file entered the store */
  readonly methods: Readonly<Partial<Record<LinkMethod, number>>>;
  readonly existed: boolean;
  /** a directory in the Hugging Face model layout: its record (docs/artifacts.md, "Models") */
  readonly model?: ModelRecord;
  /** a model directory recorded without its model: why */
  readonly modelNote?: string;
}

/** Puts `src` at `dst` without copying its bytes where possible; returns how. */
export function linkOrCopy(src: string, dst: string): LinkMethod {
  try {
    copyFileSync(src, dst, constants.COPYFILE_FICLONE_FORCE);
    return 'reflink';
  } catch {
    /* no reflink on this filesystem */
  }
  try {
    linkSync(src, dst);
    return 'hardlink';
  } catch {
    /* another filesystem, or not permitted */
  }
  copyFileSync(src, dst);
  return 'copy';
}

export class ArtifactStore {
  readonly root: string;
  readonly #manifests = new Map<string, { manifest: Manifest; refs: readonly ChunkRef[]; bytes: Buffer }>();
  readonly #reading = new Map<
    string,
    { id: string; ino: number; handle: Promise<FileHandle | undefined>; timer: NodeJS.Timeout | undefined }
  >();
  readonly #pool = new ChunkBufferPool();

  constructor(root: string) {
    this.root = root;
    mkdirSync(root, { recursive: true, mode: 0o700 });
  }

  paths(id: string): ReturnType<typeof artifactPaths> {
    if (!isHex64(id)) throw new TorusError('TORUS_API_VALIDATION', 'not an artifact id');
    return artifactPaths(this.root, id);
  }

  ids(): string[] {
    return readdirSync(this.root)
      .filter((n) => isHex64(n) && existsSync(artifactPaths(this.root, n).info))
      .sort();
  }

  info(id: string): ArtifactInfo | undefined {
    return isHex64(id) ? readInfo(this.paths(id).info) : undefined;
  }

  /** The verified manifest of a stored (complete or partial) artifact, cached. */
  manifest(id: string): { manifest: Manifest; refs: readonly ChunkRef[]; bytes: Buffer } | undefined {
    const cached = this.#manifests.get(id);
    if (cached) return cached;
    if (!this.info(id)) return undefined;
    const bytes = readFileSync(this.paths(id).manifest);
    const manifest = decodeManifest(bytes, id);
    const entry = { manifest, refs: chunkRefs(manifest), bytes };
    this.#manifests.set(id, entry);
    return entry;
  }

  describe(id: string): LocalArtifact | undefined {
    const info = this.info(id);
    const m = info && this.manifest(id);
    if (!info || !m) return undefined;
    return {
      id,
      name: info.name,
      bytes: totalBytes(m.manifest),
      chunks: m.refs.length,
      chunkSize: m.manifest.chunkSize,
      files: m.manifest.files.length,
      complete: info.complete,
      addedAt: info.addedAt,
    };
  }

  /** The artifacts that verify; those that do not are in `scan().damaged`. */
  list(): LocalArtifact[] {
    return this.scan().artifacts;
  }

  /**
   * Every artifact of the store: those whose info and manifest verify, and the others with the reason (a manifest
   * edited or truncated on disk no longer hashes to its id): never silently left out. One removed while this
   * reads is neither.
   */
  scan(): { artifacts: LocalArtifact[]; damaged: DamagedArtifact[] } {
    const artifacts: LocalArtifact[] = [];
    const damaged: DamagedArtifact[] = [];
    for (const id of this.ids()) {
      let reason: string;
      try {
        const d = this.describe(id);
        if (d) {
          artifacts.push(d);
          continue;
        }
        reason = 'info.json is not readable as { name, complete }';
      } catch (error) {
        reason = `manifest.json: ${error instanceof Error ? error.message : String(error)}`;
      }
      if (!existsSync(this.paths(id).dir)) continue;
      const name = this.info(id)?.name;
      damaged.push({ id, ...(name !== undefined ? { name } : {}), reason });
    }
    return { artifacts, damaged };
  }

  /** Adds a file or directory; the same content added twice is one artifact (only the name is updated). */
  async add(source: string, options: { name?: string; chunkSize?: number; now?: number } = {}): Promise<AddResult> {
    const files = await scanSource(source);
    const staging = join(this.root, `.staging-${randomBytes(6).toString('hex')}`);
    const methods: Partial<Record<LinkMethod, number>> = {};
    try {
      for (const f of files) {
        const dst = join(staging, 'files', f.path);
        mkdirSync(dirname(dst), { recursive: true, mode: 0o700 });
        const how = linkOrCopy(f.abs, dst);
        methods[how] = (methods[how] ?? 0) + 1;
      }
      // A model directory is read (and refused when malformed) before anything is hashed or kept.
      const model = await readModelDir(join(staging, 'files'));
      // A model's chunks are sized for per-stage transfers (model-chunk-size.ts) unless the user chose a size.
      const chunkSize = options.chunkSize ?? (model?.model ? modelChunkSize(model.model, files) : DEFAULT_CHUNK_SIZE);
      const manifest: Manifest = {
        version: MANIFEST_VERSION,
        chunkSize,
        files: await Promise.all(
          files.map(async (f) => ({
            path: f.path,
            size: f.size,
            mode: f.mode,
            chunks: await hashFileChunks(join(staging, 'files', f.path), f.size, chunkSize),
          })),
        ),
      };
      const bytes = encodeManifest(manifest);
      const id = sha256Hex(bytes);
      const name = options.name ?? (source.replace(/\/+$/, '').split('/').pop() || id.slice(0, 12));
      const existing = this.info(id);
      const p = this.paths(id);
      if (existing?.complete) {
        writeInfo(p.info, { ...existing, name });
        if (model?.model && !existsSync(join(p.dir, MODEL_FILE))) writeModelFile(p.dir, model.model);
      } else {
        if (existing) {
          this.closeReaders(id);
          rmSync(p.dir, { recursive: true, force: true });
        } // a partial download: the local copy is whole
        writeFileAtomicSync(join(staging, 'manifest.json'), bytes);
        writeInfo(join(staging, 'info.json'), { name, addedAt: options.now ?? Date.now(), complete: true });
        if (model?.model) writeModelFile(staging, model.model);
        renameSync(staging, p.dir);
      }
      return {
        ...this.describe(id)!,
        methods,
        existed: !!existing?.complete,
        ...(model?.model ? { model: model.model } : {}),
        ...(model?.note ? { modelNote: model.note } : {}),
      };
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  remove(id: string): boolean {
    const p = this.paths(id);
    if (!existsSync(p.dir)) return false;
    this.#manifests.delete(id);
    this.closeReaders(id);
    // Rename first so no reader sees a half-deleted artifact as present.
    const trash = join(this.root, `.staging-rm-${randomBytes(6).toString('hex')}`);
    renameSync(p.dir, trash);
    rmSync(trash, { recursive: true, force: true });
    return true;
  }

  /**
   * Reads chunk `index` (the caller checks it is held) into a pooled buffer: give it back with `releaseChunk` once
   * it is sent. Files stay open while chunks are read from them (closed after READ_IDLE_MS without a read, and at
   * once when the artifact is removed), so serving a chunk costs no open/close.
   * `direct`: read with O_DIRECT (where the chunk is aligned and the filesystem allows), for bytes this node just
   * received: the writer put them on disk past the page cache, so a cached read would fill fresh cache pages (the
   * dear part on a VM) for bytes read once. A user's added file is likely cached: read through the cache.
   */
  async readChunk(id: string, index: number, o: { direct?: boolean } = {}): Promise<Buffer> {
    const m = this.manifest(id);
    const ref = m?.refs[index];
    if (!m || !ref) throw new TorusError('TORUS_ARTIFACT_UNKNOWN', `no chunk ${index} of ${id} here`);
    const path = join(this.paths(id).files, m.manifest.files[ref.file]!.path);
    const buf = this.#pool.take(ref.length);
    const direct = o.direct && fitsDirect(buf, ref.offset) ? await this.#readHandle(id, path, true) : undefined;
    let fh = direct ?? (await this.#readHandle(id, path, false))!;
    try {
      let done = 0;
      while (done < ref.length) {
        let bytesRead: number;
        try {
          ({ bytesRead } = await fh.read(buf, done, ref.length - done, ref.offset + done));
        } catch (error) {
          if (fh !== direct || (error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
          fh = (await this.#readHandle(id, path, false))!; // a device whose block is larger than ALIGN
          continue;
        }
        if (bytesRead === 0)
          throw new TorusError('TORUS_ARTIFACT_CORRUPT', `chunk ${index} of ${id} is truncated on disk`);
        done += bytesRead;
      }
      return buf;
    } catch (error) {
      this.#pool.give(buf);
      throw error;
    }
  }

  /** A buffer `readChunk` returned, no longer referenced (it will be overwritten). */
  releaseChunk(buf: Buffer): void {
    this.#pool.give(buf);
  }

  async #readHandle(id: string, path: string, direct: boolean): Promise<FileHandle | undefined> {
    const key = direct ? `${path}\0direct` : path;
    let entry = this.#reading.get(key);
    // Another process (`artifacts add` of the same bytes) may have replaced the file: never read a stale inode.
    if (entry && entry.ino !== statSync(path, { throwIfNoEntry: false })?.ino) {
      this.#closeReading(key);
      entry = undefined;
    }
    if (!entry) {
      const ino = statSync(path).ino;
      // Direct: undefined where the filesystem refuses O_DIRECT (remembered like a handle, for READ_IDLE_MS).
      const handle = direct ? openDirect(path, constants.O_RDONLY) : open(path, 'r');
      handle.catch(() => this.#reading.delete(key));
      entry = { id, ino, handle, timer: undefined };
      this.#reading.set(key, entry);
    }
    const e = entry;
    clearTimeout(e.timer);
    e.timer = setTimeout(() => this.#closeReading(key), READ_IDLE_MS);
    e.timer.unref();
    return e.handle;
  }

  #closeReading(key: string): void {
    const e = this.#reading.get(key);
    if (!e) return;
    this.#reading.delete(key);
    clearTimeout(e.timer);
    void e.handle.then((h) => h?.close()).catch(() => {});
  }

  /** Closes every file kept open for reading (an artifact removed, the node stopping). */
  closeReaders(id?: string): void {
    for (const [key, e] of [...this.#reading]) if (id === undefined || e.id === id) this.#closeReading(key);
  }

  /** Copies a complete artifact into `dir` (reflink where possible) and verifies every chunk of the copy. */
  async exportTo(id: string, dir: string): Promise<{ files: number; bytes: number }> {
    const d = this.describe(id);
    const m = this.manifest(id);
    if (!d || !m) throw new TorusError('TORUS_ARTIFACT_UNKNOWN', `artifact ${id} is not in this node's store`, { id });
    if (!d.complete) throw new TorusError('TORUS_ARTIFACT_UNAVAILABLE', `artifact ${id} is only partly here`, { id });
    for (const f of m.manifest.files) {
      const dst = join(dir, f.path);
      const tmp = `${dst}.torus-partial`;
      mkdirSync(dirname(dst), { recursive: true });
      copyFileSync(join(this.paths(id).files, f.path), tmp, constants.COPYFILE_FICLONE);
      const hashes = await hashFileChunks(tmp, f.size, m.manifest.chunkSize);
      if (hashes.some((h, i) => h !== f.chunks[i])) {
        rmSync(tmp, { force: true });
        throw new TorusError(
          'TORUS_ARTIFACT_CORRUPT',
          `the stored copy of ${f.path} does not match the manifest of ${id}; remove and fetch it again`,
          { id, path: f.path },
        );
      }
      await chmod(tmp, f.mode);
      await rename(tmp, dst);
    }
    return { files: m.manifest.files.length, bytes: d.bytes };
  }

  /** Bytes available to this user on the store's filesystem. */
  async freeBytes(): Promise<number> {
    const s = await statfs(this.root);
    return s.bavail * s.bsize;
  }
}
