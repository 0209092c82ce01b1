/** Structural equality of log entries, independent of key order (two encoders may order keys differently). */
import type { IndexedEnvelope } from '../../../protocols/peer-frames.js';

export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object' && !ArrayBuffer.isView(value)) {
    const rec = value as Record<string, unknown>;
    return `{${Object.keys(rec)
      .filter((k) => rec[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(rec[k])}`)
      .join(',')}}`;
  }
  if (ArrayBuffer.isView(value))
    return `bin:${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
  return JSON.stringify(value) ?? 'undefined';
}

export function sameEntry(a: IndexedEnvelope, b: IndexedEnvelope): boolean {
  return a.index === b.index && a.term === b.term && canonical(a.event) === canonical(b.event);
}
