/**
 * Durable file writes: the one place that knows how to replace a file so that a crash or power cut leaves either
 * the old or the new content, never half of one (temp file in the same directory, fsync, rename, fsync of the
 * directory so the rename itself is on disk). Snapshot, identity, vote and credential files all go through here.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The fs calls this module makes; tests pass a counting double to check that fsync really happens. */
export interface DurableFs {
  openSync: typeof openSync;
  writeSync: (fd: number, data: Uint8Array) => number;
  fsyncSync: typeof fsyncSync;
  closeSync: typeof closeSync;
  renameSync: typeof renameSync;
  unlinkSync: typeof unlinkSync;
  mkdirSync: typeof mkdirSync;
}

export const realFs: DurableFs = {
  openSync,
  fsyncSync,
  closeSync,
  renameSync,
  unlinkSync,
  mkdirSync,
  writeSync: (fd, data) => writeSync(fd, data),
};

let tmpCounter = 0;

/** fsync of a directory: makes a rename or a new file in it durable. Some filesystems refuse; that is not fatal. */
export function fsyncDir(dir: string, fs: DurableFs = realFs): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM') throw error;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Replaces `path` atomically and durably with `data` (created with `mode`, default 0600: these files hold ids,
 * votes, state and secrets). The directory is created (0700) when missing.
 */
export function writeFileAtomicSync(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number; fs?: DurableFs } = {},
): void {
  const fs = options.fs ?? realFs;
  const dir = dirname(path);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${++tmpCounter}.tmp`);
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const fd = fs.openSync(tmp, 'w', options.mode ?? 0o600);
  try {
    let off = 0;
    while (off < bytes.length) off += fs.writeSync(fd, bytes.subarray(off));
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    try {
      fs.unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw error;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(tmp, path);
  } catch (error) {
    try {
      fs.unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw error;
  }
  fsyncDir(dir, fs);
}
