/**
 * Pure ordered buffer for indexed entries arriving out of order: holds entries above the next expected index
 * and releases them strictly consecutively. Bounded (a hostile leader cannot grow it without limit) and
 * explicit about every rejected entry (stale, duplicate, conflicting duplicate, too far ahead).
 */
import type { IndexedEnvelope } from '../../../protocols/peer-frames.js';
import { sameEntry } from './entry-equality.js';

export interface OrderedBuffer {
  /** The index the consumer expects next. */
  readonly next: number;
  readonly pending: ReadonlyMap<number, IndexedEnvelope>;
}

export type IngestOutcome = 'buffered' | 'stale' | 'duplicate' | 'conflict' | 'full';

export function emptyBuffer(next = 1): OrderedBuffer {
  return { next, pending: new Map() };
}

export function ingest(
  buffer: OrderedBuffer,
  entry: IndexedEnvelope,
  maxPending: number,
): { buffer: OrderedBuffer; outcome: IngestOutcome } {
  if (entry.index < buffer.next) return { buffer, outcome: 'stale' };
  const held = buffer.pending.get(entry.index);
  // Same index twice: identical is a harmless retransmission; different payloads mean two writers, keep the first.
  if (held) return { buffer, outcome: sameEntry(held, entry) ? 'duplicate' : 'conflict' };
  if (buffer.pending.size >= maxPending || entry.index >= buffer.next + maxPending) return { buffer, outcome: 'full' };
  const pending = new Map(buffer.pending);
  pending.set(entry.index, entry);
  return { buffer: { next: buffer.next, pending }, outcome: 'buffered' };
}

/** Releases the consecutive run starting at `next`. */
export function drain(buffer: OrderedBuffer): { buffer: OrderedBuffer; ready: IndexedEnvelope[] } {
  const ready: IndexedEnvelope[] = [];
  let next = buffer.next;
  for (let e = buffer.pending.get(next); e; e = buffer.pending.get(next)) {
    ready.push(e);
    next++;
  }
  if (ready.length === 0) return { buffer, ready };
  const pending = new Map(buffer.pending);
  for (const e of ready) pending.delete(e.index);
  return { buffer: { next, pending }, ready };
}

/** Moves the expected index forward (after a snapshot), dropping everything below it. */
export function skipTo(buffer: OrderedBuffer, next: number): OrderedBuffer {
  const pending = new Map([...buffer.pending].filter(([i]) => i >= next));
  return { next, pending };
}

/** Lowest buffered index, if any: the end of the current gap. */
export function firstPending(buffer: OrderedBuffer): number | undefined {
  let min: number | undefined;
  for (const i of buffer.pending.keys()) if (min === undefined || i < min) min = i;
  return min;
}
