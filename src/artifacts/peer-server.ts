/**
 * Serves the peer routes (peer-paths.ts) from this node's store. Every request must carry the HMAC proof of the
 * cluster key (403 TORUS_ARTIFACT_PROOF_REFUSED otherwise); the id must be 64 hex characters and the chunk index a
 * decimal integer below the manifest's chunk count, so nothing outside the store can ever be named (runs of chunks:
 * peer-runs.ts). Returns false
 * for paths that are not peer artifact routes (the HTTP server then routes them as usual).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TorusError, ValidationError } from '../protocols/errors.js';
import { readTextBody, sendError, sendJson } from '../http/http-io.js';
import { isHex64 } from './ids.js';
import { encodeBits, MAX_CHUNK_WAIT_MS, PEER_PREFIX } from './peer-paths.js';
import { ArtifactProofs, PROOF_HEADER } from './proof.js';
import { serveRun, type RunBackend } from './peer-runs.js';

/** What the server needs from the node's artifact service. */
export interface PeerBackend extends RunBackend {
  readonly dataKey: string | null;
  manifestBytes(id: string): Buffer | undefined;
  /** held chunks (undefined: artifact not here) */
  haveSet(id: string): Uint8Array | undefined;
  /** true once chunk `index` is held, waiting up to `ms` for a transfer in progress */
  waitForChunk(id: string, index: number, ms: number): Promise<boolean>;
  readChunk(id: string, index: number): Promise<Buffer>;
  /** the buffer readChunk returned, sent */
  releaseChunk?(buf: Buffer): void;
  orderFetch(id: string, body: { upstream?: string; name?: string }): Promise<unknown>;
}

const ROUTE = /^\/v1\/peer\/artifacts\/([^/]+)\/(manifest|have|fetch|chunks|chunks\/([^/]+))$/;

/** The one POST (fetch orders) is small JSON; its bytes are read first, since the proof names their digest. */
const FETCH_BODY_LIMIT = 4096;

export function createPeerHandler(backend: PeerBackend): (req: IncomingMessage, res: ServerResponse) => boolean {
  let proofs: ArtifactProofs | undefined; // made on first use: the backend may still be in its constructor now
  return (req, res) => {
    const raw = req.url ?? '/';
    if (!raw.startsWith(PEER_PREFIX)) return false;
    proofs ??= new ArtifactProofs(backend.dataKey);
    serve(backend, proofs, req, res, raw).catch((error: unknown) => sendError(res, error));
    return true;
  };
}

async function serve(
  b: PeerBackend,
  proofs: ArtifactProofs,
  req: IncomingMessage,
  res: ServerResponse,
  raw: string,
): Promise<void> {
  const method = req.method ?? 'GET';
  const bodyText = method === 'POST' ? await readTextBody(req, FETCH_BODY_LIMIT) : '';
  const verdict = proofs.check(method, raw, req.headers[PROOF_HEADER], Buffer.from(bodyText));
  if (!verdict.ok) {
    req.resume();
    throw new TorusError(
      'TORUS_ARTIFACT_PROOF_REFUSED',
      `artifact peer requests must prove the cluster key: ${verdict.why}`,
      { where: 'headers', path: PROOF_HEADER },
    );
  }
  const url = new URL(raw, 'http://peer.invalid');
  const m = ROUTE.exec(url.pathname);
  if (!m) throw new TorusError('TORUS_API_NOT_FOUND', `no peer route ${url.pathname}`);
  const id = m[1]!;
  if (!isHex64(id)) throw new ValidationError('params', 'id', 'expected an artifact id (64 lower-case hex characters)');
  const what = m[2]!;
  const want = what === 'fetch' ? 'POST' : 'GET';
  if (method !== want)
    throw new TorusError('TORUS_API_METHOD_NOT_ALLOWED', `${method} is not allowed on ${url.pathname}`, {
      allow: [want],
    });
  if (what === 'fetch') {
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = bodyText === '' ? {} : JSON.parse(bodyText);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch (error) {
      throw new ValidationError('body', '', `invalid JSON (${(error as Error).message})`);
    }
    const upstream = body.upstream;
    const name = body.name;
    if (upstream !== undefined && (typeof upstream !== 'string' || !/^[A-Za-z0-9._:-]{1,128}$/.test(upstream)))
      throw new ValidationError('body', 'upstream', 'expected a node id');
    if (name !== undefined && (typeof name !== 'string' || name.length < 1 || name.length > 256))
      throw new ValidationError('body', 'name', 'expected 1..256 characters');
    sendJson(
      res,
      202,
      await b.orderFetch(id, {
        ...(upstream !== undefined ? { upstream } : {}),
        ...(name !== undefined ? { name } : {}),
      }),
    );
    return;
  }
  // A chain's upstream may not have started its own transfer yet when its downstream asks for a chunk (every
  // placed node starts on its own, runner-gate.ts): a request willing to wait also waits for the artifact.
  const willWait = what.startsWith('chunks/') && /^\d{1,6}$/.test(url.searchParams.get('waitMs') ?? '');
  const manifest =
    b.manifestBytes(id) ??
    (willWait
      ? await manifestWithin(b, id, Math.min(Number(url.searchParams.get('waitMs')), MAX_CHUNK_WAIT_MS))
      : undefined);
  if (!manifest) throw new TorusError('TORUS_ARTIFACT_UNKNOWN', `artifact ${id} is not on this node`, { id });
  if (what === 'manifest') {
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': manifest.byteLength,
      'cache-control': 'no-store',
    });
    res.end(manifest);
    return;
  }
  const have = b.haveSet(id) ?? new Uint8Array(0);
  if (what === 'have') {
    sendJson(res, 200, { chunks: have.length, count: have.reduce((s, x) => s + x, 0), bits: encodeBits(have) });
    return;
  }
  if (what === 'chunks') {
    await serveRun(b, id, have, url, res);
    return;
  }
  const indexText = m[3]!;
  if (!/^\d{1,7}$/.test(indexText) || Number(indexText) >= have.length)
    throw new ValidationError('params', 'index', `expected a chunk index below ${have.length}`);
  const index = Number(indexText);
  const waitText = url.searchParams.get('waitMs') ?? '0';
  if (!/^\d{1,6}$/.test(waitText)) throw new ValidationError('query', 'waitMs', 'expected milliseconds');
  const waitMs = Math.min(Number(waitText), MAX_CHUNK_WAIT_MS);
  if (!(await b.waitForChunk(id, index, waitMs)))
    throw new TorusError('TORUS_ARTIFACT_UNAVAILABLE', `chunk ${index} of ${id} is not here (yet)`, { id, index });
  const data = await b.readChunk(id, index);
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': data.byteLength,
    'cache-control': 'no-store',
  });
  res.end(data, () => b.releaseChunk?.(data));
}

async function manifestWithin(b: PeerBackend, id: string, ms: number): Promise<Buffer | undefined> {
  const end = Date.now() + ms;
  for (let m = b.manifestBytes(id); ; m = b.manifestBytes(id)) {
    if (m || Date.now() >= end) return m;
    await new Promise((r) => setTimeout(r, Math.min(100, end - Date.now())));
  }
}
