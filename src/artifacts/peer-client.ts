/**
 * Requests to another node's peer routes (peer-paths.ts), each signed with the cluster's data key. Chunks (the
 * bulk of the bytes) go over node:http with keep-alive connections, read straight into one buffer of the announced
 * length: fetch()'s web streams and final concatenation cost a third more CPU per byte, and the receive path is
 * CPU-bound on small machines.
 */
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { errorFromJson, TorusError } from '../core/errors.js';
import { signPeerRequest } from './proof.js';
import { decodeBits, peerPath } from './peer-paths.js';

/** Bigger than any chunk (64 MiB max) plus slack: a peer announcing more is refused before anything is read. */
const MAX_CHUNK_BODY = 64 * 1024 * 1024 + 1;

/** Chunk buffers kept for reuse per length: a fresh 4 MiB buffer costs a thousand page faults and GC work. */
const POOLED_PER_LENGTH = 8;

export class PeerClient {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 16, keepAliveMsecs: 10_000 });
  readonly #pool = new Map<number, Buffer[]>();
  constructor(readonly key: string | null, readonly timeoutMs = 20_000) {}

  close(): void {
    this.#agent.destroy();
    this.#pool.clear();
  }

  /** Gives back a buffer `chunk()` returned, once nothing refers to it any more (it will be overwritten). */
  release(buffer: Uint8Array): void {
    if (!Buffer.isBuffer(buffer) || buffer.byteOffset !== 0 || buffer.buffer.byteLength !== buffer.byteLength) return;
    const list = this.#pool.get(buffer.byteLength) ?? [];
    if (list.length >= POOLED_PER_LENGTH || list.includes(buffer)) return;
    list.push(buffer);
    this.#pool.set(buffer.byteLength, list);
  }

  async #request(base: string, method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = this.timeoutMs): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers: { ...signPeerRequest(this.key, method, path), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body === undefined ? null : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new TorusError('TORUS_API_UNREACHABLE', `${base}: ${cause}`, { base });
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      let error: unknown;
      try { error = (JSON.parse(text) as { error?: unknown }).error; } catch { /* not JSON */ }
      throw error ? errorFromJson(error) : new TorusError('TORUS_API_UNREACHABLE', `${base}${path}: HTTP ${res.status}`, { base, status: res.status });
    }
    return res;
  }

  async manifest(base: string, id: string): Promise<Uint8Array> {
    return new Uint8Array(await (await this.#request(base, 'GET', peerPath.manifest(id))).arrayBuffer());
  }

  async have(base: string, id: string, chunks: number): Promise<Uint8Array> {
    const body = (await (await this.#request(base, 'GET', peerPath.have(id))).json()) as { bits?: unknown };
    return typeof body.bits === 'string' ? decodeBits(body.bits, chunks) : new Uint8Array(chunks);
  }

  async chunk(base: string, id: string, index: number, waitMs = 0): Promise<Uint8Array> {
    const path = peerPath.chunk(id, index, waitMs);
    const signal = AbortSignal.timeout(this.timeoutMs + waitMs);
    const unreachable = (cause: string): TorusError => new TorusError('TORUS_API_UNREACHABLE', `${base}: ${cause}`, { base });
    return new Promise<Uint8Array>((resolve, reject) => {
      let req: ReturnType<typeof httpRequest>;
      try {
        req = httpRequest(new URL(base + path), { method: 'GET', agent: this.#agent, headers: signPeerRequest(this.key, 'GET', path), signal }, (res) => {
          if (res.statusCode !== 200) { void errorOf(res, base, path).then(reject, reject); return; }
          const length = Number(res.headers['content-length']);
          if (!Number.isSafeInteger(length) || length < 0 || length > MAX_CHUNK_BODY) { res.destroy(); reject(unreachable(`bad content-length ${String(res.headers['content-length'])}`)); return; }
          const body = this.#pool.get(length)?.pop() ?? Buffer.allocUnsafe(length);
          let at = 0;
          res.on('data', (d: Buffer) => {
            if (at + d.length > length) { res.destroy(); reject(unreachable('more bytes than announced')); return; }
            d.copy(body, at);
            at += d.length;
          });
          res.once('end', () => (at === length ? resolve(body) : reject(unreachable(`body cut at ${at} of ${length} bytes`))));
          res.once('error', (error) => reject(unreachable((error as NodeJS.ErrnoException).code ?? error.name)));
        });
      } catch (error) {
        reject(unreachable((error as Error).message));
        return;
      }
      req.once('error', (error) => reject(unreachable((error as NodeJS.ErrnoException).code ?? error.name)));
      req.end();
    });
  }

  async orderFetch(base: string, id: string, body: { upstream?: string; name?: string }): Promise<unknown> {
    return (await this.#request(base, 'POST', peerPath.fetch(id), body)).json();
  }
}

/** A non-200 answer as the TorusError its JSON body names (or an HTTP status error). */
async function errorOf(res: IncomingMessage, base: string, path: string): Promise<TorusError> {
  let text = '';
  res.setEncoding('utf8');
  for await (const part of res) { text += part as string; if (text.length > 65536) break; }
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    if (error) return errorFromJson(error);
  } catch { /* not JSON */ }
  return new TorusError('TORUS_API_UNREACHABLE', `${base}${path}: HTTP ${res.statusCode}`, { base, status: res.statusCode });
}
