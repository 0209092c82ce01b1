/**
 * Proof of the data key when a ring socket opens (the ring's bytes stay unencrypted for speed). The
 * acceptor sends a fresh 16-byte challenge; the dialer answers with its hello frame, its own 16-byte nonce and
 * HMAC(key, hello | challenge | nonce); the acceptor answers with its ack and HMAC(key, ack | challenge | nonce).
 * Both MACs are bound to both fresh nonces, so neither side can be replayed, and a stranger without the key is
 * refused before it is counted as a neighbour. Without a key (open mode) none of this is sent.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const CHALLENGE_BYTES = 16;
export const LINK_MAC_BYTES = 32;

export function challenge(): Buffer {
  return randomBytes(CHALLENGE_BYTES);
}

export function linkMac(
  key: string,
  what: 'hello' | 'ack',
  frame: Uint8Array,
  acceptorNonce: Uint8Array,
  dialerNonce: Uint8Array,
): Buffer {
  return createHmac('sha256', key)
    .update(`torus-ring-v1 ${what}\0`)
    .update(frame)
    .update(acceptorNonce)
    .update(dialerNonce)
    .digest();
}

export function linkMacMatches(expected: Buffer, got: Uint8Array): boolean {
  return got.length === expected.length && timingSafeEqual(expected, got);
}
