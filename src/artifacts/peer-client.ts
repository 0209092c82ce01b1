/** Requests to another node's peer routes (peer-paths.ts), each signed with the cluster's data key. */
import { errorFromJson, TorusError } from '../core/errors.js';
import { signPeerRequest } from './proof.js';
import { decodeBits, peerPath } from './peer-paths.js';

export class PeerClient {
  constructor(readonly key: string | null, readonly timeoutMs = 20_000) {}

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
    const res = await this.#request(base, 'GET', peerPath.chunk(id, index, waitMs), undefined, this.timeoutMs + waitMs);
    return new Uint8Array(await res.arrayBuffer());
  }

  async orderFetch(base: string, id: string, body: { upstream?: string; name?: string }): Promise<unknown> {
    return (await this.#request(base, 'POST', peerPath.fetch(id), body)).json();
  }
}
