/**
 * The manifest: what an artifact is (files, sizes, modes, the SHA-256 of each fixed-size chunk of each file). Its
 * canonical JSON bytes are hashed into the artifact id, so a manifest fetched from any peer is checked by its
 * hash alone, and `decodeManifest` accepts only the one canonical encoding (re-encoding must give the same bytes).
 *
 * Chunks are per file (a file of n bytes has ceil(n / chunkSize) chunks, the last one shorter; an empty file has
 * none); the artifact's chunk i is the i-th chunk in file order. Paths are relative POSIX paths that cannot leave
 * the artifact's directory (no `..`, no absolute paths, no empty or `.` segments, no backslashes, no NUL).
 */
import { ValidationError } from '../protocols/errors.js';
import { isHex64, MAX_CHUNK_SIZE, MIN_CHUNK_SIZE, sha256Hex } from './ids.js';

export const MANIFEST_VERSION = 1;
export const MAX_MANIFEST_BYTES = 32 * 1024 * 1024;
export const MAX_FILES = 100_000;
export const MAX_CHUNKS = 1 << 20;

export interface ManifestFile {
  readonly path: string;
  readonly size: number;
  /** permission bits (0..0o777) */
  readonly mode: number;
  readonly chunks: readonly string[];
}

export interface Manifest {
  readonly version: typeof MANIFEST_VERSION;
  readonly chunkSize: number;
  readonly files: readonly ManifestFile[];
}

/** Where chunk `index` lives: file, byte offset in it, length, expected hash. */
export interface ChunkRef {
  readonly index: number;
  readonly file: number;
  readonly offset: number;
  readonly length: number;
  readonly hash: string;
}

/** The canonical bytes (fixed key order, no spaces): their SHA-256 is the artifact id. */
export function encodeManifest(m: Manifest): Buffer {
  const files = m.files.map((f) => ({ path: f.path, size: f.size, mode: f.mode, chunks: f.chunks }));
  return Buffer.from(JSON.stringify({ version: m.version, chunkSize: m.chunkSize, files }));
}

export function manifestId(m: Manifest): string {
  return sha256Hex(encodeManifest(m));
}

const fail = (path: string, why: string): never => {
  throw new ValidationError('body', `manifest${path}`, why);
};

/** A safe relative path: segments of 1..255 bytes, none `.` or `..`, no `\` or NUL; ≤ 4096 bytes. */
export function checkRelativePath(p: unknown, where = ''): string {
  if (typeof p !== 'string' || p.length === 0 || Buffer.byteLength(p) > 4096)
    return fail(where, 'expected a relative path of 1..4096 bytes');
  if (p.includes('\\') || p.includes('\0')) return fail(where, 'backslashes and NUL are not allowed in paths');
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.' || seg === '..' || Buffer.byteLength(seg) > 255)
      return fail(where, `unsafe path ${JSON.stringify(p)}`);
  }
  return p;
}

function int(v: unknown, path: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max)
    return fail(path, `expected an integer in ${min}..${max}`);
  return v;
}

/** Validates parsed JSON into a Manifest (ordering, limits, chunk counts, path conflicts). */
export function checkManifest(v: unknown): Manifest {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return fail('', 'expected an object');
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.join(',') !== 'version,chunkSize,files') fail('', 'expected exactly version, chunkSize, files');
  if (o.version !== MANIFEST_VERSION) fail('.version', `expected ${MANIFEST_VERSION}`);
  const chunkSize = int(o.chunkSize, '.chunkSize', MIN_CHUNK_SIZE, MAX_CHUNK_SIZE);
  if (!Array.isArray(o.files) || o.files.length > MAX_FILES)
    return fail('.files', `expected an array of at most ${MAX_FILES} files`);
  let total = 0;
  const files = o.files.map((raw: unknown, i): ManifestFile => {
    const q = `.files[${i}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return fail(q, 'expected an object');
    const f = raw as Record<string, unknown>;
    if (Object.keys(f).join(',') !== 'path,size,mode,chunks') fail(q, 'expected exactly path, size, mode, chunks');
    const path = checkRelativePath(f.path, `${q}.path`);
    const size = int(f.size, `${q}.size`, 0, Number.MAX_SAFE_INTEGER);
    const mode = int(f.mode, `${q}.mode`, 0, 0o777);
    if (!Array.isArray(f.chunks) || f.chunks.length !== Math.ceil(size / chunkSize))
      return fail(`${q}.chunks`, 'chunk count does not match size');
    total += f.chunks.length;
    if (total > MAX_CHUNKS) fail('.files', `more than ${MAX_CHUNKS} chunks`);
    f.chunks.forEach((h, j) => {
      if (!isHex64(h)) fail(`${q}.chunks[${j}]`, 'expected a SHA-256 hex string');
    });
    return { path, size, mode, chunks: f.chunks as string[] };
  });
  for (let i = 1; i < files.length; i++) {
    const prev = files[i - 1]!.path;
    const cur = files[i]!.path;
    if (!(prev < cur)) fail(`.files[${i}].path`, 'paths must be sorted and unique');
    if (cur.startsWith(`${prev}/`)) fail(`.files[${i}].path`, `${prev} is a file and a directory`);
  }
  return { version: MANIFEST_VERSION, chunkSize, files };
}

/** Decodes manifest bytes; with `expectedId`, refuses bytes whose hash differs (a peer cannot substitute one). */
export function decodeManifest(bytes: Uint8Array, expectedId?: string): Manifest {
  if (bytes.byteLength > MAX_MANIFEST_BYTES) fail('', 'too large');
  if (expectedId !== undefined && sha256Hex(bytes) !== expectedId) fail('', `bytes do not hash to ${expectedId}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return fail('', 'not JSON');
  }
  const m = checkManifest(parsed);
  if (!encodeManifest(m).equals(Buffer.from(bytes))) fail('', 'not in canonical form');
  return m;
}

export function totalBytes(m: Manifest): number {
  return m.files.reduce((s, f) => s + f.size, 0);
}

/** Every chunk of the artifact in order. */
export function chunkRefs(m: Manifest): ChunkRef[] {
  const out: ChunkRef[] = [];
  m.files.forEach((f, file) => {
    f.chunks.forEach((hash, j) => {
      const offset = j * m.chunkSize;
      out.push({ index: out.length, file, offset, length: Math.min(m.chunkSize, f.size - offset), hash });
    });
  });
  return out;
}
