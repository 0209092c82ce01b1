/**
 * A runner stream on disk: `<stream>.<offset>.log` files, each named by the stream offset of its first byte (as
 * Kafka names its segments). A name never changes once written, and the offset of every byte is known from the
 * name alone, so a reader can follow the stream across rotations by offset: it never reads a byte twice, never
 * skips one that is still on disk, and knows how many it missed when the oldest files were removed under it.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export type LogStream = 'stdout' | 'stderr';

export interface Segment {
  /** Stream offset of the file's first byte. */
  readonly base: number;
  readonly path: string;
}

const DIGITS = 16; // room for 10^16 bytes per stream; fixed width so names sort as their offsets do

export function segmentName(stream: LogStream, base: number): string {
  return `${stream}.${String(base).padStart(DIGITS, '0')}.log`;
}

const NAME = /^(stdout|stderr)\.(\d{16})\.log$/;

/** The stream's files, oldest first; none when the directory or the stream does not exist yet. */
export async function listSegments(dir: string, stream: LogStream): Promise<Segment[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const segments: Segment[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    if (m && m[1] === stream) segments.push({ base: Number(m[2]), path: join(dir, name) });
  }
  return segments.sort((a, b) => a.base - b.base);
}

/** Bytes of the file, 0 when it is gone (removed by rotation, or not created yet). */
export async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

/** Where the stream ends now: the newest file's base plus its size (0 for no file). */
export async function streamEnd(segments: readonly Segment[]): Promise<number> {
  const last = segments.at(-1);
  return last ? last.base + (await sizeOf(last.path)) : 0;
}

/** Bytes of the stream still on disk (the sum of its files). */
export async function bytesOnDisk(segments: readonly Segment[]): Promise<number> {
  let total = 0;
  for (const s of segments) total += await sizeOf(s.path);
  return total;
}
