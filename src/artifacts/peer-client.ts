/**
 * Requests to another node's peer routes (peer-paths.ts), each signed with the cluster's data key. Chunks go through
 * chunk-client.ts (the kernel reads each body straight into a pooled buffer); the small requests (manifest, have,
 * fetch orders) over node:http with keep-alive connections, each body read into one buffer of the announced length:
 * fetch()'s web streams and final concatenation cost a third more CPU per byte and its first use hundreds of
 * milliseconds of start-up.
 */
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { errorFromJson, TorusError } from '../protocols/errors.js';
import { artifactSigner } from './proof.js';
import type { PeerSigner } from '../protocols/peer-http-proof.js';
import { decodeBits, peerPath } from './peer-paths.js';
import { ChunkClient } from './chunk-client.js';
import { ChunkBufferPool } from './chunk-buffers.js';

/** Bigger than any chunk (64 MiB max) or manifest (32 MiB max) plus slack: more is refused before it is read. */
const MAX_BODY = 64 * 1024 * 1024 + 1;
/** Small chunks in runs keep more buffers in flight: the pool keeps up to this many bytes of each length (or 24). */
const POOL_BYTES = 48 * 1024 * 1024;
/** Error answers are small JSON. */
const MAX_ERROR_BODY = 64 * 1024;

export class PeerClient {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 16, keepAliveMsecs: 10_000 });
  readonly #chunks = new ChunkClient();
  /** room for the chunks a transfer holds at once: on the wire, being verified and written, kept to forward */
  readonly #pool = new ChunkBufferPool(24, undefined, POOL_BYTES);
  readonly #sign: PeerSigner;
  /** `nodeId`: the sender the proofs name. */
  constructor(
    readonly key: string | null,
    nodeId: string,
    readonly timeoutMs = 20_000,
  ) {
    this.#sign = artifactSigner(key, nodeId);
  }

  close(): void {
    this.#agent.destroy();
    this.#chunks.close();
    this.#pool.clear();
  }

  /** Gives back a buffer `chunk()` returned, once nothing refers to it any more (it will be overwritten). */
  release(buffer: Uint8Array): void {
    this.#pool.give(buffer);
  }

  /** One request; resolves with the 2xx answer's body, rejects with the peer's error. */
  #request(
    base: string,
    method: 'GET' | 'POST',
    path: string,
    o: { body?: unknown; timeoutMs?: number } = {},
  ): Promise<Buffer> {
    const unreachable = (cause: string): TorusError =>
      new TorusError('TORUS_API_UNREACHABLE', `${base}: ${cause}`, { base });
    const payload = o.body === undefined ? undefined : Buffer.from(JSON.stringify(o.body));
    return new Promise<Buffer>((resolve, reject) => {
      let req: ReturnType<typeof httpRequest>;
      try {
        req = httpRequest(
          new URL(base + path),
          {
            method,
            agent: this.#agent,
            signal: AbortSignal.timeout(o.timeoutMs ?? this.timeoutMs),
            headers: {
              ...this.#sign(method, path, payload),
              ...(payload ? { 'content-type': 'application/json', 'content-length': payload.byteLength } : {}),
            },
          },
          (res) => {
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              void errorOf(res, base, path).then(reject, reject);
              return;
            }
            const length = Number(res.headers['content-length']);
            if (!Number.isSafeInteger(length) || length < 0 || length > MAX_BODY) {
              res.destroy();
              reject(unreachable(`bad content-length ${String(res.headers['content-length'])}`));
              return;
            }
            const body = Buffer.allocUnsafe(length);
            let at = 0;
            res.on('data', (d: Buffer) => {
              if (at + d.length > length) {
                res.destroy();
                reject(unreachable('more bytes than announced'));
                return;
              }
              d.copy(body, at);
              at += d.length;
            });
            res.once('end', () =>
              at === length ? resolve(body) : reject(unreachable(`body cut at ${at} of ${length} bytes`)),
            );
            res.once('error', (error) => reject(unreachable((error as NodeJS.ErrnoException).code ?? error.name)));
          },
        );
      } catch (error) {
        reject(unreachable((error as Error).message));
        return;
      }
      req.once('error', (error) => reject(unreachable((error as NodeJS.ErrnoException).code ?? error.name)));
      req.end(payload);
    });
  }

  async manifest(base: string, id: string): Promise<Uint8Array> {
    return this.#request(base, 'GET', peerPath.manifest(id));
  }

  async have(base: string, id: string, chunks: number): Promise<Uint8Array> {
    const body = jsonOf(await this.#request(base, 'GET', peerPath.have(id)), base) as { bits?: unknown };
    return typeof body.bits === 'string' ? decodeBits(body.bits, chunks) : new Uint8Array(chunks);
  }

  /** Chunk `index` into a pooled buffer (give it back with `release`), read by the kernel straight into it (chunk-client.ts). */
  async chunk(base: string, id: string, index: number, waitMs = 0): Promise<Uint8Array> {
    const path = peerPath.chunk(id, index, waitMs);
    return this.#chunks.get({
      ...hostOf(base),
      path,
      headers: this.#sign('GET', path),
      timeoutMs: this.timeoutMs + waitMs,
      maxBody: MAX_BODY,
      bodyBuffer: (length) => this.#pool.take(length),
    });
  }

  /**
   * Chunks `from`..`from + lengths.length - 1` in one request (peer-runs.ts), each into a pooled buffer handed to
   * `onChunk` as soon as it is whole (give it back with `release`). Rejects after the chunks that arrived whole
   * were handed over; an older peer without the route rejects with TORUS_API_NOT_FOUND.
   */
  async run(
    base: string,
    id: string,
    from: number,
    lengths: readonly number[],
    onChunk: (index: number, data: Uint8Array) => void,
  ): Promise<void> {
    const path = peerPath.run(id, from, from + lengths.length);
    await this.#chunks.getRun({
      ...hostOf(base),
      path,
      headers: this.#sign('GET', path),
      timeoutMs: this.timeoutMs,
      pieces: lengths,
      onPiece: (k, body) => onChunk(from + k, body),
      bodyBuffer: (length) => this.#pool.take(length),
    });
  }

  async orderFetch(base: string, id: string, body: { upstream?: string; name?: string }): Promise<unknown> {
    return jsonOf(await this.#request(base, 'POST', peerPath.fetch(id), { body }), base);
  }
}

function hostOf(base: string): { host: string; port: number } {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new TorusError('TORUS_API_UNREACHABLE', `${base}: not a URL`, { base });
  }
  if (url.protocol !== 'http:')
    throw new TorusError('TORUS_API_UNREACHABLE', `${base}: peers are reached over http:`, { base });
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port || 80) };
}

function jsonOf(body: Buffer, base: string): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new TorusError('TORUS_API_UNREACHABLE', `${base}: the answer is not JSON`, { base });
  }
}

/** A non-200 answer as the TorusError its JSON body names (or an HTTP status error). */
async function errorOf(res: IncomingMessage, base: string, path: string): Promise<TorusError> {
  let text = '';
  res.setEncoding('utf8');
  for await (const part of res) {
    text += part as string;
    if (text.length > MAX_ERROR_BODY) {
      res.destroy();
      break;
    }
  }
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    if (error) return errorFromJson(error);
  } catch {
    /* not JSON */
  }
  return new TorusError('TORUS_API_UNREACHABLE', `${base}${path}: HTTP ${res.statusCode}`, {
    base,
    status: res.statusCode,
  });
}
