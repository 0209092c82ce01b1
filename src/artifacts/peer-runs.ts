/**
 * Serves a run of consecutive chunks (`GET …/chunks?from=F&to=T`, peer-paths.ts) as one body: their bytes back to
 * back, in order. One request, one answer per run instead of per chunk: at 256 KiB chunks the per-request cost (HTTP
 * parsing, proof, a syscall or two each way) was most of a holder's CPU per byte. The receiver knows every chunk's
 * length from the manifest, so the body needs no framing, and it verifies each chunk as it arrives.
 * Only chunks held now are served (no waiting: a chain's upstream is asked chunk by chunk). Everything is checked
 * before the first byte is sent; a chunk that cannot be read after that cuts the connection (the receiver keeps
 * the chunks that arrived whole and asks again for the rest).
 */
import type { ServerResponse } from 'node:http';
import { TorusError, ValidationError } from '../protocols/errors.js';
import { MAX_RUN_BYTES, MAX_RUN_CHUNKS } from './peer-paths.js';

/** What serving a run needs from the node's artifact service. */
export interface RunBackend {
  /** every chunk's length, in manifest order (undefined: artifact not here) */
  chunkLengths(id: string): readonly number[] | undefined;
  readChunk(id: string, index: number): Promise<Buffer>;
  releaseChunk?(buf: Buffer): void;
}

function indexParam(url: URL, name: 'from' | 'to'): number {
  const values = url.searchParams.getAll(name);
  if (values.length !== 1 || !/^\d{1,7}$/.test(values[0]!))
    throw new ValidationError('query', name, 'expected one chunk index (a decimal integer)');
  return Number(values[0]);
}

export async function serveRun(
  b: RunBackend,
  id: string,
  have: Uint8Array,
  url: URL,
  res: ServerResponse,
): Promise<void> {
  for (const key of url.searchParams.keys())
    if (key !== 'from' && key !== 'to') throw new ValidationError('query', key, 'unknown parameter (from, to)');
  const from = indexParam(url, 'from');
  const to = indexParam(url, 'to');
  if (from >= to || to > have.length)
    throw new ValidationError('query', 'to', `expected from < to ≤ ${have.length} (the chunk count)`);
  if (to - from > MAX_RUN_CHUNKS) throw new ValidationError('query', 'to', `a run is at most ${MAX_RUN_CHUNKS} chunks`);
  const lengths = b.chunkLengths(id);
  if (!lengths || lengths.length !== have.length)
    throw new TorusError('TORUS_ARTIFACT_UNKNOWN', `artifact ${id} is not on this node`, { id });
  let bytes = 0;
  for (let k = from; k < to; k++) bytes += lengths[k]!;
  if (bytes > MAX_RUN_BYTES)
    throw new ValidationError('query', 'to', `a run is at most ${MAX_RUN_BYTES} bytes (this one: ${bytes})`);
  for (let k = from; k < to; k++)
    if (!have[k])
      throw new TorusError('TORUS_ARTIFACT_UNAVAILABLE', `chunk ${k} of ${id} is not here (yet)`, { id, index: k });
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': bytes,
    'cache-control': 'no-store',
  });
  const read = (k: number): Promise<Buffer> => {
    const p = b.readChunk(id, k);
    p.catch(() => {}); // awaited below; a rejection while the previous chunk drains must not go unhandled
    return p;
  };
  let next = read(from);
  for (let k = from; k < to; k++) {
    let data: Buffer;
    try {
      data = await next;
    } catch {
      res.destroy(); // the head promised bytes this node cannot send: a cut connection says so
      return;
    }
    // The next chunk is read from disk while this one is on the wire.
    if (k + 1 < to && !res.destroyed) next = read(k + 1);
    if (data.byteLength !== lengths[k] || res.destroyed) {
      b.releaseChunk?.(data);
      if (k + 1 < to)
        next.then(
          (d) => b.releaseChunk?.(d),
          () => {},
        );
      res.destroy();
      return;
    }
    if (!res.write(data, () => b.releaseChunk?.(data))) await drained(res);
  }
  res.end();
}

/** Resolves once `res` can take more bytes, or is closed (the caller then sees `res.destroyed`). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
