/**
 * The replicated log as pure data: a compacted prefix (covered by the state snapshot the shell holds) plus a
 * bounded tail of entries kept to serve gap requests. Index 0 means "empty"; entries start at 1.
 */
import type { IndexedEnvelope } from '../../../protocols/peer-frames.js';
import { canonical } from './entry-equality.js';

export interface LogState {
  /** Last index folded into the snapshot (0 = none). */
  readonly base: number;
  readonly baseTerm: number;
  /** Chain hash at `base`: two logs with equal hashes at an index hold the same entries up to it. */
  readonly baseHash: string;
  /** Entries base+1 .. lastIndex, consecutive, with their chain hashes. */
  readonly entries: readonly IndexedEnvelope[];
  readonly hashes: readonly string[];
  /** Each entry's size in bytes (entrySize), and their sum: what the retained tail holds, bounded by compaction. */
  readonly sizes: readonly number[];
  readonly bytes: number;
}

export const GENESIS_HASH = '0';
export const emptyLog: LogState = {
  base: 0,
  baseTerm: 0,
  baseHash: GENESIS_HASH,
  entries: [],
  hashes: [],
  sizes: [],
  bytes: 0,
};

/** Room for the envelope around the event (index, term, the chain hash kept with it). */
const ENVELOPE_BYTES = 64;

/** An entry's size: its event's canonical JSON text (what its chain hash is computed over) plus the envelope. */
export function entrySize(eventText: string): number {
  return Buffer.byteLength(eventText) + ENVELOPE_BYTES;
}

/**
 * Chain hash (cyrb53 over the previous hash and the canonical entry). Terms alone cannot tell two logs apart
 * when two lone nodes led the same term before they met; the chain can. Not cryptographic, not needed to be.
 */
export function chainHash(prev: string, entry: IndexedEnvelope, eventText = canonical(entry.event)): string {
  const text = `${prev}|${entry.index}|${entry.term}|${eventText}`;
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16);
}

export function lastHash(log: LogState): string {
  return log.hashes.at(-1) ?? log.baseHash;
}

/** Chain hash at `index`, or undefined when it was compacted away or does not exist yet. */
export function hashAt(log: LogState, index: number): string | undefined {
  if (index === log.base) return log.baseHash;
  return index > log.base ? log.hashes[index - log.base - 1] : undefined;
}

export function lastIndex(log: LogState): number {
  return log.base + log.entries.length;
}

export function lastTerm(log: LogState): number {
  return log.entries.at(-1)?.term ?? log.baseTerm;
}

export function entryAt(log: LogState, index: number): IndexedEnvelope | undefined {
  return index > log.base ? log.entries[index - log.base - 1] : undefined;
}

/** Appends consecutive entries (compaction is separate: only committed entries may be folded away). */
export function appendEntries(log: LogState, entries: readonly IndexedEnvelope[]): LogState {
  if (entries.length === 0) return log;
  const hashes = [...log.hashes];
  const sizes = [...log.sizes];
  let bytes = log.bytes;
  let prev = lastHash(log);
  for (const e of entries) {
    const text = canonical(e.event);
    hashes.push((prev = chainHash(prev, e, text)));
    const size = entrySize(text);
    sizes.push(size);
    bytes += size;
  }
  return { ...log, entries: [...log.entries, ...entries], hashes, sizes, bytes };
}

/**
 * Folds entries into the snapshot so that at most `retain` entries and `retainBytes` bytes stay, but never past
 * `committed`: an uncommitted entry may still be needed by a follower, and the shell's snapshot only covers what
 * was applied. A follower that needs a folded entry gets a snapshot instead.
 */
export function compactLog(log: LogState, committed: number, retain: number, retainBytes = Infinity): LogState {
  const upTo = Math.min(committed, lastIndex(log) - retain);
  let drop = Math.max(0, upTo - log.base);
  let bytes = log.bytes;
  for (let i = 0; i < drop; i++) bytes -= log.sizes[i]!;
  // Large entries: fold more, oldest first, until the rest fits the budget (committed ones only).
  while (bytes > retainBytes && log.base + drop < committed) bytes -= log.sizes[drop++]!;
  if (drop <= 0) return log;
  const last = log.entries[drop - 1]!;
  return {
    base: last.index,
    baseTerm: last.term,
    baseHash: log.hashes[drop - 1]!,
    entries: log.entries.slice(drop),
    hashes: log.hashes.slice(drop),
    sizes: log.sizes.slice(drop),
    bytes,
  };
}

/** Term of the entry at `index` (the base's term at the base), or undefined when not held. */
export function termAt(log: LogState, index: number): number | undefined {
  if (index === log.base) return log.baseTerm;
  return entryAt(log, index)?.term;
}

/** The log cut after `index` (uncommitted entries a new leader does not have): index must be >= base. */
export function truncateAfter(log: LogState, index: number): LogState {
  if (index >= lastIndex(log)) return log;
  const keep = Math.max(0, index - log.base);
  const sizes = log.sizes.slice(0, keep);
  return {
    ...log,
    entries: log.entries.slice(0, keep),
    hashes: log.hashes.slice(0, keep),
    sizes,
    bytes: sizes.reduce((sum, n) => sum + n, 0),
  };
}

/** Entries in [from, to] still held, or null when `from` was compacted away (the caller sends a snapshot). */
export function sliceLog(log: LogState, from: number, to: number): IndexedEnvelope[] | null {
  if (from <= log.base) return null;
  const hi = Math.min(to, lastIndex(log));
  return log.entries.slice(from - log.base - 1, Math.max(from - log.base - 1, hi - log.base));
}

/** The log after installing a snapshot that covers everything up to `index`. */
export function resetTo(index: number, term: number, hash: string): LogState {
  return { base: index, baseTerm: term, baseHash: hash, entries: [], hashes: [], sizes: [], bytes: 0 };
}

/** Log completeness order used by elections: later last term first, then longer log. Positive when a is more complete. */
export function compareLogs(
  a: { lastIndex: number; lastTerm: number },
  b: { lastIndex: number; lastTerm: number },
): number {
  return a.lastTerm !== b.lastTerm ? a.lastTerm - b.lastTerm : a.lastIndex - b.lastIndex;
}
