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
  /**
   * Entries base+1 .. lastIndex with their chain hashes and sizes live in `store` from `start`, `count` of them. The
   * store is shared by the logs of one lineage and only ever grows at its end: an append from the log that ends
   * where the store ends pushes in place (older logs keep their own `count`, so they never see it), anything else
   * copies first. So an append costs O(1), not a copy of the retained tail (4096 entries by default).
   */
  readonly store: LogStore;
  readonly start: number;
  readonly count: number;
  /** Sum of the held entries' sizes (entrySize): what the retained tail holds, bounded by compaction. */
  readonly bytes: number;
  /** Sum of the sizes of the store's entries before `start` (folded, not yet dropped from memory). */
  readonly deadBytes: number;
}

/** Physical storage of a log lineage (see LogState); never shrinks in place. */
export interface LogStore {
  readonly entries: IndexedEnvelope[];
  readonly hashes: string[];
  readonly sizes: number[];
}

const newStore = (): LogStore => ({ entries: [], hashes: [], sizes: [] });

export const GENESIS_HASH = '0';
export const emptyLog: LogState = {
  base: 0,
  baseTerm: 0,
  baseHash: GENESIS_HASH,
  store: newStore(),
  start: 0,
  count: 0,
  bytes: 0,
  deadBytes: 0,
};

/** The held entries (a copy: base+1 .. lastIndex). */
export function entriesOf(log: LogState): IndexedEnvelope[] {
  return log.store.entries.slice(log.start, log.start + log.count);
}

/** The held entries' sizes, in order (a copy). */
export function sizesOf(log: LogState): number[] {
  return log.store.sizes.slice(log.start, log.start + log.count);
}

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
  return log.count > 0 ? log.store.hashes[log.start + log.count - 1]! : log.baseHash;
}

/** Chain hash at `index`, or undefined when it was compacted away or does not exist yet. */
export function hashAt(log: LogState, index: number): string | undefined {
  if (index === log.base) return log.baseHash;
  return index > log.base && index <= lastIndex(log) ? log.store.hashes[log.start + index - log.base - 1] : undefined;
}

export function lastIndex(log: LogState): number {
  return log.base + log.count;
}

export function lastTerm(log: LogState): number {
  return log.count > 0 ? log.store.entries[log.start + log.count - 1]!.term : log.baseTerm;
}

export function entryAt(log: LogState, index: number): IndexedEnvelope | undefined {
  return index > log.base && index <= lastIndex(log) ? log.store.entries[log.start + index - log.base - 1] : undefined;
}

/** Appends consecutive entries (compaction is separate: only committed entries may be folded away). */
export function appendEntries(log: LogState, entries: readonly IndexedEnvelope[]): LogState {
  if (entries.length === 0) return log;
  // In place only when this log ends where its store ends; otherwise (a truncated or an older log) on a copy. An
  // empty log starts a store of its own (the shared empty log's store stays empty).
  const inPlace = log.count > 0 && log.start + log.count === log.store.entries.length;
  const store = inPlace ? log.store : copyStore(log);
  const start = store === log.store ? log.start : 0;
  let bytes = log.bytes;
  let prev = lastHash(log);
  for (const e of entries) {
    const text = canonical(e.event);
    store.entries.push(e);
    store.hashes.push((prev = chainHash(prev, e, text)));
    const size = entrySize(text);
    store.sizes.push(size);
    bytes += size;
  }
  return {
    ...log,
    store,
    start,
    count: log.count + entries.length,
    bytes,
    deadBytes: store === log.store ? log.deadBytes : 0,
  };
}

/** A fresh store holding exactly the log's entries. */
function copyStore(log: LogState): LogStore {
  const end = log.start + log.count;
  return {
    entries: log.store.entries.slice(log.start, end),
    hashes: log.store.hashes.slice(log.start, end),
    sizes: log.store.sizes.slice(log.start, end),
  };
}

/**
 * Folds entries into the snapshot so that at most `retain` entries and `retainBytes` bytes stay, but never past
 * `committed`: an uncommitted entry may still be needed by a follower, and the shell's snapshot only covers what
 * was applied. A follower that needs a folded entry gets a snapshot instead. Folded entries leave memory once they
 * are as many as those held (amortised O(1) per fold), or at once when they would push memory past `retainBytes`.
 */
export function compactLog(log: LogState, committed: number, retain: number, retainBytes = Infinity): LogState {
  const upTo = Math.min(committed, lastIndex(log) - retain);
  let drop = Math.max(0, upTo - log.base);
  const sizes = log.store.sizes;
  let bytes = log.bytes;
  for (let i = 0; i < drop; i++) bytes -= sizes[log.start + i]!;
  // Large entries: fold more, oldest first, until the rest fits the budget (committed ones only).
  while (bytes > retainBytes && log.base + drop < committed) bytes -= sizes[log.start + drop++]!;
  if (drop <= 0) return log;
  const last = log.store.entries[log.start + drop - 1]!;
  const folded: LogState = {
    base: last.index,
    baseTerm: last.term,
    baseHash: log.store.hashes[log.start + drop - 1]!,
    store: log.store,
    start: log.start + drop,
    count: log.count - drop,
    bytes,
    deadBytes: log.deadBytes + (log.bytes - bytes),
  };
  const dead = folded.start >= Math.max(64, folded.count) || folded.deadBytes + folded.bytes > retainBytes;
  return dead ? { ...folded, store: copyStore(folded), start: 0, deadBytes: 0 } : folded;
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
  let bytes = 0;
  for (let i = 0; i < keep; i++) bytes += log.store.sizes[log.start + i]!;
  // The store is shared: the next append from this shorter log copies (appendEntries), so no one else sees it.
  return { ...log, count: keep, bytes };
}

/** Entries in [from, to] still held, or null when `from` was compacted away (the caller sends a snapshot). */
export function sliceLog(log: LogState, from: number, to: number): IndexedEnvelope[] | null {
  if (from <= log.base) return null;
  const hi = Math.min(to, lastIndex(log));
  const lo = from - log.base - 1;
  return log.store.entries.slice(log.start + lo, log.start + Math.max(lo, hi - log.base));
}

/** The log after installing a snapshot that covers everything up to `index`. */
export function resetTo(index: number, term: number, hash: string): LogState {
  return {
    base: index,
    baseTerm: term,
    baseHash: hash,
    store: newStore(),
    start: 0,
    count: 0,
    bytes: 0,
    deadBytes: 0,
  };
}

/** Log completeness order used by elections: later last term first, then longer log. Positive when a is more complete. */
export function compareLogs(
  a: { lastIndex: number; lastTerm: number },
  b: { lastIndex: number; lastTerm: number },
): number {
  return a.lastTerm !== b.lastTerm ? a.lastTerm - b.lastTerm : a.lastIndex - b.lastIndex;
}
