/**
 * Peer requests for artifact data prove the cluster key: header `x-torus-artifact-proof: <ms>.<hex>` where hex is
 * HMAC-SHA256 over `torus artifact v1\n<METHOD>\n<path and query>\n<ms>` with the cluster's data-plane key
 * (`keys.dataKey`). A proof is accepted within ±2 minutes of the receiver's clock; a captured one can only repeat
 * the same request (read the same chunk again) within that window. Compared in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const PROOF_HEADER = 'x-torus-artifact-proof';
export const PROOF_WINDOW_MS = 120_000;

function mac(key: string, method: string, path: string, ms: number): string {
  return createHmac('sha256', Buffer.from(key, 'hex')).update(`torus artifact v1\n${method}\n${path}\n${ms}`).digest('hex');
}

/** The header value for a request; `key` null (an --insecure-open cluster) sends none. */
export function signPeerRequest(key: string | null, method: string, path: string, now = Date.now()): Record<string, string> {
  return key === null ? {} : { [PROOF_HEADER]: `${now}.${mac(key, method, path, now)}` };
}

/** True when `header` proves the key for this request (always true when `key` is null: open cluster). */
export function verifyPeerRequest(key: string | null, method: string, path: string, header: string | string[] | undefined, now = Date.now()): boolean {
  if (key === null) return true;
  if (typeof header !== 'string') return false;
  const m = /^(\d{1,16})\.([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  const ms = Number(m[1]);
  if (Math.abs(now - ms) > PROOF_WINDOW_MS) return false;
  return timingSafeEqual(Buffer.from(m[2]!, 'hex'), Buffer.from(mac(key, method, path, ms), 'hex'));
}
