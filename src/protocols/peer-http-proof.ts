/**
 * How one node proves itself to another node's HTTP API without the API token (that token is for people and
 * their programs; a node never sends it). Header `x-torus-peer-proof` =
 * `v1 <nodeId> <unix ms> <nonce, 32 hex> <body sha-256, 64 hex> <hmac, 64 hex>`, the HMAC-SHA256 under the
 * cluster's peer-HTTP key (HKDF of the secret with its own label, `keys.peerHttpKey`) of
 * `torus-peer-http-v1 \n METHOD \n path?query \n body digest \n nodeId \n ms \n nonce`. Accepted within
 * ±PEER_PROOF_WINDOW_MS of the receiver's clock and once only (replay cache keyed by the MAC, bounded). A sniffed
 * proof therefore opens nothing: it names one request, already answered, and expires in seconds.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const PEER_PROOF_HEADER = 'x-torus-peer-proof';
export const PEER_PROOF_WINDOW_MS = 30_000;
/** Most proofs remembered at once; beyond it new proofs are refused until old ones expire (bounded memory). */
export const MAX_REMEMBERED_PEER_PROOFS = 50_000;

const EMPTY_BODY = createHash('sha256').digest('hex');

export const bodyDigest = (body?: Uint8Array | string): string =>
  body === undefined || body.length === 0 ? EMPTY_BODY : createHash('sha256').update(body).digest('hex');

function mac(
  key: string,
  method: string,
  pathAndQuery: string,
  digest: string,
  nodeId: string,
  ms: number,
  nonce: string,
): string {
  return createHmac('sha256', Buffer.from(key, 'hex'))
    .update(['torus-peer-http-v1', method.toUpperCase(), pathAndQuery, digest, nodeId, String(ms), nonce].join('\n'))
    .digest('hex');
}

/** Headers proving this node for one request (none in open mode: `key` null). */
export type PeerSigner = (method: string, pathAndQuery: string, body?: Uint8Array | string) => Record<string, string>;

export function peerSigner(key: string | null, nodeId: string, now: () => number = Date.now): PeerSigner {
  return (method, pathAndQuery, body): Record<string, string> => {
    if (key === null) return {};
    const ms = now();
    const nonce = randomBytes(16).toString('hex');
    const digest = bodyDigest(body);
    return {
      [PEER_PROOF_HEADER]: `v1 ${nodeId} ${ms} ${nonce} ${digest} ${mac(key, method, pathAndQuery, digest, nodeId, ms, nonce)}`,
    };
  };
}

export type PeerVerdict = { readonly ok: true; readonly nodeId: string } | { readonly ok: false; readonly why: string };

/** Checks peer proofs for one node: key, request binding, freshness, single use. */
export class PeerProofChecker {
  readonly #key: string;
  readonly #now: () => number;
  readonly #seen = new Map<string, number>();

  constructor(key: string, now: () => number = Date.now) {
    this.#key = key;
    this.#now = now;
  }

  /** `body` as received (empty for a GET); its digest must be the one the proof names. */
  check(header: string | string[] | undefined, method: string, pathAndQuery: string, body?: Uint8Array): PeerVerdict {
    if (typeof header !== 'string') return { ok: false, why: `missing ${PEER_PROOF_HEADER}` };
    const m =
      /^v1 ([A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}) (\d{1,15}) ([0-9a-f]{32}) ([0-9a-f]{64}) ([0-9a-f]{64})$/.exec(
        header,
      );
    if (!m) return { ok: false, why: `malformed ${PEER_PROOF_HEADER}` };
    const [, nodeId, msText, nonce, digest, got] = m as unknown as [string, string, string, string, string, string];
    const ms = Number(msText);
    const now = this.#now();
    if (Math.abs(now - ms) > PEER_PROOF_WINDOW_MS)
      return { ok: false, why: 'proof outside the freshness window (clock skew over 30 s?)' };
    if (digest !== bodyDigest(body)) return { ok: false, why: 'the body is not the one the proof names' };
    const expected = Buffer.from(mac(this.#key, method, pathAndQuery, digest, nodeId, ms, nonce), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(got, 'hex')))
      return { ok: false, why: 'proof does not match (wrong key or altered request)' };
    this.#expire(now);
    if (this.#seen.has(got)) return { ok: false, why: 'proof already used (replay)' };
    if (this.#seen.size >= MAX_REMEMBERED_PEER_PROOFS) return { ok: false, why: 'too many recent proofs; retry later' };
    this.#seen.set(got, ms + PEER_PROOF_WINDOW_MS);
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
