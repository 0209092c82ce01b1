/**
 * Data-plane proof of the cluster key on probe requests: header `x-torus-proof` =
 * `v1 <nodeId> <unix ms> <nonce, 16 hex> <hmac, 64 hex>`, the HMAC-SHA256 under `keys.dataKey` of
 * `torus-probe-v1 \n method \n path \n query \n nodeId \n ms \n nonce`. Valid within ±PROOF_WINDOW_MS of the
 * server's clock and once only (a replay cache keyed by the MAC, kept for the window). In open mode (no key)
 * there are no proofs. Anyone can read a probe's bytes (the data plane is not encrypted); nobody without the
 * key can make a node send or receive them.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const PROBE_PROOF_HEADER = 'x-torus-proof';
export const PROOF_WINDOW_MS = 30_000;
/** Most proofs remembered at once; beyond it new proofs are refused until old ones expire (no unbounded memory). */
export const MAX_REMEMBERED_PROOFS = 100_000;

/** Signs one request: the value of the `x-torus-proof` header. `pathAndQuery` as sent (`/v1/probe/echo?x=1`). */
export type ProbeSigner = (method: string, pathAndQuery: string) => string;

function mac(key: string, method: string, pathAndQuery: string, nodeId: string, ms: number, nonce: string): string {
  const q = pathAndQuery.indexOf('?');
  const path = q < 0 ? pathAndQuery : pathAndQuery.slice(0, q);
  const query = q < 0 ? '' : pathAndQuery.slice(q + 1);
  return createHmac('sha256', key)
    .update(['torus-probe-v1', method.toUpperCase(), path, query, nodeId, String(ms), nonce].join('\n'))
    .digest('hex');
}

/** A signer for this node's requests (null in open mode: nothing to sign with). */
export function probeSigner(dataKey: string | null, nodeId: string, now: () => number = Date.now): ProbeSigner | null {
  if (dataKey === null) return null;
  return (method, pathAndQuery) => {
    const ms = now();
    const nonce = randomBytes(8).toString('hex');
    return `v1 ${nodeId} ${ms} ${nonce} ${mac(dataKey, method, pathAndQuery, nodeId, ms, nonce)}`;
  };
}

/** Headers to add to a request (none in open mode). */
export function proofHeaders(
  signer: ProbeSigner | null | undefined,
  method: string,
  pathAndQuery: string,
): Record<string, string> {
  return signer ? { [PROBE_PROOF_HEADER]: signer(method, pathAndQuery) } : {};
}

export type ProofVerdict =
  | { readonly ok: true; readonly nodeId: string }
  | { readonly ok: false; readonly why: string };

/** Checks proofs for one node: key, freshness, single use. */
export class ProofChecker {
  readonly #key: string;
  readonly #now: () => number;
  readonly #seen = new Map<string, number>();

  constructor(dataKey: string, now: () => number = Date.now) {
    this.#key = dataKey;
    this.#now = now;
  }

  check(header: string | string[] | undefined, method: string, pathAndQuery: string): ProofVerdict {
    if (typeof header !== 'string') return { ok: false, why: `missing ${PROBE_PROOF_HEADER}` };
    const m = /^v1 ([A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}) (\d{1,15}) ([0-9a-f]{16}) ([0-9a-f]{64})$/.exec(header);
    if (!m) return { ok: false, why: `malformed ${PROBE_PROOF_HEADER}` };
    const [, nodeId, msText, nonce, got] = m as unknown as [string, string, string, string, string];
    const ms = Number(msText);
    const now = this.#now();
    if (Math.abs(now - ms) > PROOF_WINDOW_MS)
      return { ok: false, why: 'proof outside the freshness window (clock skew over 30 s?)' };
    const expected = Buffer.from(mac(this.#key, method, pathAndQuery, nodeId, ms, nonce), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(got, 'hex')))
      return { ok: false, why: 'proof does not match (wrong key or altered request)' };
    this.#expire(now);
    if (this.#seen.has(got)) return { ok: false, why: 'proof already used (replay)' };
    if (this.#seen.size >= MAX_REMEMBERED_PROOFS) return { ok: false, why: 'too many recent proofs; retry later' };
    this.#seen.set(got, ms + PROOF_WINDOW_MS);
    return { ok: true, nodeId };
  }

  #expire(now: number): void {
    // Insertion order is roughly expiry order: stop at the first live entry.
    for (const [k, until] of this.#seen) {
      if (until >= now) break;
      this.#seen.delete(k);
    }
  }
}
