/**
 * Cluster-port cryptography (protocol v3): the cluster-name hash advertised in hello/TXT, the handshake proof and
 * the per-connection, per-direction AEAD keys. The key itself never crosses the wire.
 *
 * Both hellos (plaintext, nothing secret in them) are hashed into a transcript; each side proves the key with an
 * HMAC over the transcript and its own id, so a proof is bound to this connection (both nonces) and to every
 * field of both hellos (a man in the middle cannot alter one). Frame keys come from HKDF(key, transcript,
 * direction). In open mode (no key) the proof uses a public constant: it proves nothing about trust, only that
 * the peer read our hello (a blind, half-open handshake never becomes a member).
 */
import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Hello } from '../../../protocols/peer-frames.js';

export const PROOF_BYTES = 32;
const OPEN_MODE_KEY = 'torus-v3 open mode (no cluster key)';

/** Short, stable, non-reversible tag of the cluster name (names may be private). */
export function clusterNameHash(name: string): string {
  return createHash('sha256').update(`torus-cluster\0${name}`).digest('hex').slice(0, 16);
}

/** Every field of a hello in a fixed order (both ends hash the same bytes whatever the msgpack key order). */
function helloDigest(h: Hello): Buffer {
  const fields = [
    h.v,
    h.nodeId,
    h.cluster,
    h.incarnation,
    h.startedAt,
    h.port,
    h.apiPort,
    h.nonce,
    h.auth,
    h.name,
    h.version,
    h.addresses,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest();
}

/** The handshake transcript: the dialer's hello, then the listener's. */
export function transcript(dialer: Hello, listener: Hello): Buffer {
  return createHash('sha256')
    .update('torus-v3 transcript\0')
    .update(helloDigest(dialer))
    .update(helloDigest(listener))
    .digest();
}

function authKey(key: string | null, th: Buffer): Buffer {
  if (key === null) return Buffer.from(OPEN_MODE_KEY);
  return Buffer.from(hkdfSync('sha256', Buffer.from(key, 'utf8'), th, 'torus-v3 auth', 32));
}

/** What `senderId` sends to prove the key (hex). Bound to the transcript, so it cannot be replayed or reflected. */
export function authProof(key: string | null, th: Buffer, senderId: string): string {
  return createHmac('sha256', authKey(key, th)).update(`proof\0${senderId}`).digest('hex');
}

/** Constant-time comparison of two hex proofs/MACs (a length mismatch is simply false). */
export function proofMatches(expected: string, got: string): boolean {
  const a = Buffer.from(expected, 'hex');
  const b = Buffer.from(got, 'hex');
  return a.length === b.length && a.length === PROOF_BYTES && timingSafeEqual(a, b);
}

export type Direction = 'dialer-to-listener' | 'listener-to-dialer';

/** AEAD key of one direction of one connection (aes-256-gcm). */
export function frameKey(key: string, th: Buffer, direction: Direction): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(key, 'utf8'), th, `torus-v3 frames ${direction}`, 32));
}
