/**
 * Reading an artifact's source: the files under a path (a file, or a directory walked recursively; symlinks to
 * files are followed, symlinked directories and special files are refused with their path) and the SHA-256 of
 * each fixed-size chunk of a file.
 */
import { open, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createHash } from 'node:crypto';
import { TorusError } from '../protocols/errors.js';
import { checkRelativePath } from './manifest.js';

export interface SourceFile {
  /** path inside the artifact */
  readonly path: string;
  readonly abs: string;
  readonly size: number;
  readonly mode: number;
}

/** The files of `source` in the manifest's order (sorted by artifact path). */
export async function scanSource(source: string): Promise<SourceFile[]> {
  const st = await stat(source).catch((error: NodeJS.ErrnoException) => {
    throw new TorusError('TORUS_API_NOT_FOUND', `cannot read ${source}: ${error.code ?? error.message}`, {
      path: source,
    });
  });
  if (st.isFile())
    return [{ path: checkRelativePath(basename(source)), abs: source, size: st.size, mode: st.mode & 0o777 }];
  if (!st.isDirectory())
    throw new TorusError('TORUS_API_VALIDATION', `${source} is neither a file nor a directory`, { path: source });
  const out: SourceFile[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const abs = join(dir, entry.name);
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        await walk(abs, path);
        continue;
      }
      const s = await stat(abs);
      if (entry.isSymbolicLink() && s.isDirectory())
        throw new TorusError('TORUS_API_VALIDATION', `symlinked directories are not followed: ${abs}`, { path: abs });
      if (!s.isFile()) throw new TorusError('TORUS_API_VALIDATION', `not a regular file: ${abs}`, { path: abs });
      out.push({ path: checkRelativePath(path), abs, size: s.size, mode: s.mode & 0o777 });
    }
  };
  await walk(source, '');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** SHA-256 of each `chunkSize` chunk of the first `size` bytes of `abs` (a file that got shorter is an error). */
export async function hashFileChunks(
  abs: string,
  size: number,
  chunkSize: number,
  onBytes?: (n: number) => void,
): Promise<string[]> {
  const fh = await open(abs, 'r');
  try {
    const buf = Buffer.allocUnsafe(Math.min(chunkSize, Math.max(size, 1)));
    const hashes: string[] = [];
    for (let offset = 0; offset < size; offset += chunkSize) {
      const length = Math.min(chunkSize, size - offset);
      const hash = createHash('sha256');
      let done = 0;
      while (done < length) {
        const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, length - done), offset + done);
        if (bytesRead === 0)
          throw new TorusError('TORUS_INTERNAL', `${abs} changed while it was read (shorter than ${size} bytes)`, {
            path: abs,
          });
        hash.update(buf.subarray(0, bytesRead));
        done += bytesRead;
      }
      hashes.push(hash.digest('hex'));
      onBytes?.(length);
    }
    return hashes;
  } finally {
    await fh.close();
  }
}
