/**
 * Cluster secret handling: the cluster-name hash advertised in hello/TXT, the HMAC challenge-response proof and
 * the per-connection frame MAC. The secret itself never crosses the wire.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const MAC_BYTES = 32;

/** Short, stable, non-reversible tag of the cluster name (names may be private). */
export function clusterNameHash(name: string): string {
  return createHash('sha256').update('torus-cluster\0' + name).digest('hex').slice(0, 16);
}

/** What a peer proves: it knows `secret`, bound to both nonces and its own id, so a proof cannot be replayed. */
export function authProof(secret: string, receiverNonce: string, senderNonce: string, senderId: string): string {
  return createHmac('sha256', secret).update(`auth\0${receiverNonce}\0${senderNonce}\0${senderId}`).digest('hex');
}

export function proofMatches(expected: string, got: string): boolean {
  const a = Buffer.from(expected, 'hex');
  const b = Buffer.from(got, 'hex');
  return a.length === b.length && a.length === MAC_BYTES && timingSafeEqual(a, b);
}

/** Key for the frames of one connection: both nonces, sorted so both ends derive the same key. */
export function sessionKey(secret: string, nonceA: string, nonceB: string): Buffer {
  const [x, y] = [nonceA, nonceB].sort();
  return createHmac('sha256', secret).update(`session\0${x}\0${y}`).digest();
}

/** MAC of one frame: bound to the sender id (no reflection) and a per-direction counter (no replay, no reordering). */
export function frameMac(key: Buffer, senderId: string, seq: number, body: Uint8Array): Buffer {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(seq));
  return createHmac('sha256', key).update(senderId + '\0').update(counter).update(body).digest();
}
