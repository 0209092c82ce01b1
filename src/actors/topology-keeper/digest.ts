/**
 * Canonical serialisation of the state: JSON with object keys sorted by code unit, `undefined` fields omitted,
 * arrays in order. Two nodes that applied the same events in the same order produce the same bytes, whatever
 * the key insertion order of the objects involved; `stateDigest` is the sha256 of those bytes (hex).
 */
import { createHash } from 'node:crypto';
import type { ClusterState } from './state.js';

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError('canonicalJson: non-finite number');
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function stateDigest(state: ClusterState): string {
  return sha256Hex(canonicalJson(state));
}
