/**
 * Artifact ids and chunk hashes are lower-case SHA-256 hex. Everything that arrives from the network or the API
 * is checked against these before it names anything on disk: no path is ever built from unchecked input.
 */
import { createHash } from 'node:crypto';
import { ValidationError } from '../protocols/errors.js';

const HEX64 = /^[0-9a-f]{64}$/;

export function isHex64(v: unknown): v is string {
  return typeof v === 'string' && HEX64.test(v);
}

/** Throws a ValidationError naming `where`/`path` unless `v` is a 64-character lower-case hex string. */
export function artifactId(v: unknown, where: 'params' | 'body' | 'flag' = 'params', path = 'id'): string {
  if (!isHex64(v)) throw new ValidationError(where, path, 'expected an artifact id (64 lower-case hex characters)');
  return v;
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Default chunk size: large enough that per-chunk overhead (a request, a hash, a journal entry) is negligible. */
export const DEFAULT_CHUNK_SIZE = 4 * 1024 * 1024;
export const MIN_CHUNK_SIZE = 64 * 1024;
export const MAX_CHUNK_SIZE = 64 * 1024 * 1024;
