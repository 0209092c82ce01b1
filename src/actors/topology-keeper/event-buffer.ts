/**
 * The ordered buffer in front of `applyEvent` (Ready shape: `offerEvent(buffer, indexed) → { buffer, effects }`).
 * Entries are applied strictly in index order. An entry ahead of the next index waits until the gap is filled
 * (a `gap` effect names the missing range so the shell can ask the leader). Duplicates are recognised by a hash
 * of (term, event): the same payload again is ignored; a different payload for an index already held (applied
 * recently or pending) is a conflict and refused; an index older than the remembered window is refused as stale.
 */
import { TorusError, type ErrorJson } from '../../protocols/errors.js';
import type { ClusterEventType, IndexedEvent } from '../../protocols/events.js';
import { applyEvent, EventOrderError } from './apply.js';
import { canonicalJson, sha256Hex, stateDigest } from './digest.js';
import type { StateSnapshot } from './snapshot.js';
import { emptyState, type ClusterState } from './state.js';

export interface EventBuffer {
  readonly state: ClusterState;
  /** entries beyond `state.lastIndex + 1`, sorted by index, one per index */
  readonly pending: readonly { readonly entry: IndexedEvent; readonly hash: string }[];
  /** hashes of the last applied entries (newest last), to tell harmless re-sends from conflicts */
  readonly recent: readonly { readonly index: number; readonly hash: string }[];
}

export interface BufferLimits {
  /** how far beyond the next index an entry may be held (bounds memory against hostile indices) */
  readonly maxAhead: number;
  /** how many applied entries are remembered for duplicate checks */
  readonly remember: number;
}
export const DEFAULT_LIMITS: BufferLimits = { maxAhead: 10_000, remember: 1024 };

/** Perform in order. `applied` entries are already in `buffer.state`; `gap` asks for indices from..to inclusive. */
export type BufferEffect =
  | { readonly kind: 'applied'; readonly index: number; readonly type: ClusterEventType; readonly entry: IndexedEvent }
  | { readonly kind: 'buffered'; readonly index: number }
  | { readonly kind: 'duplicate'; readonly index: number }
  | { readonly kind: 'rejected'; readonly index: number; readonly error: ErrorJson }
  | { readonly kind: 'gap'; readonly from: number; readonly to: number }
  | { readonly kind: 'installed'; readonly lastIndex: number; readonly digest: string };

export interface BufferStep {
  readonly buffer: EventBuffer;
  readonly effects: readonly BufferEffect[];
}

export function createBuffer(state: ClusterState = emptyState): EventBuffer {
  return { state, pending: [], recent: [] };
}

export function entryHash(entry: IndexedEvent): string {
  return sha256Hex(canonicalJson({ term: entry.term, event: entry.event }));
}

function rejected(
  index: number,
  code: 'TORUS_EVENT_CONFLICT' | 'TORUS_EVENT_STALE' | 'TORUS_EVENT_OUT_OF_ORDER',
  message: string,
): BufferEffect {
  return { kind: 'rejected', index, error: new TorusError(code, message, { index }).toJSON() };
}

export function offerEvent(
  buffer: EventBuffer,
  entry: IndexedEvent,
  limits: BufferLimits = DEFAULT_LIMITS,
): BufferStep {
  const { index } = entry;
  const next = buffer.state.lastIndex + 1;
  const hash = entryHash(entry);
  if (index < next) {
    const seen = buffer.recent.find((r) => r.index === index);
    if (!seen)
      return {
        buffer,
        effects: [
          rejected(index, 'TORUS_EVENT_STALE', `event ${index} is older than the remembered log (next is ${next})`),
        ],
      };
    if (seen.hash === hash) return { buffer, effects: [{ kind: 'duplicate', index }] };
    return {
      buffer,
      effects: [rejected(index, 'TORUS_EVENT_CONFLICT', `event ${index} differs from the one already applied`)],
    };
  }
  if (index - next >= limits.maxAhead) {
    return {
      buffer,
      effects: [rejected(index, 'TORUS_EVENT_OUT_OF_ORDER', `event ${index} is too far ahead (next is ${next})`)],
    };
  }
  const held = buffer.pending.find((p) => p.entry.index === index);
  if (held) {
    if (held.hash === hash) return { buffer, effects: [{ kind: 'duplicate', index }] };
    return {
      buffer,
      effects: [rejected(index, 'TORUS_EVENT_CONFLICT', `event ${index} differs from the one already buffered`)],
    };
  }
  const pending = [...buffer.pending, { entry, hash }].sort((a, b) => a.entry.index - b.entry.index);
  const drained = drain({ ...buffer, pending }, limits);
  const effects = index === next ? drained.effects : [{ kind: 'buffered', index } as const, ...drained.effects];
  return { buffer: drained.buffer, effects };
}

/** Offers entries one after the other (e.g. a batch from the leader), concatenating the effects. */
export function offerEvents(
  buffer: EventBuffer,
  entries: Iterable<IndexedEvent>,
  limits: BufferLimits = DEFAULT_LIMITS,
): BufferStep {
  let b = buffer;
  const effects: BufferEffect[] = [];
  for (const e of entries) {
    const step = offerEvent(b, e, limits);
    b = step.buffer;
    effects.push(...step.effects.filter((x) => x.kind !== 'gap'));
  }
  return { buffer: b, effects: [...effects, ...gapOf(b)] };
}

/** Applies every pending entry that is next in line; an entry refused by apply (term went back) is dropped. */
function drain(buffer: EventBuffer, limits: BufferLimits): BufferStep {
  let { state, pending, recent } = buffer;
  const effects: BufferEffect[] = [];
  while (pending.length > 0 && pending[0]!.entry.index === state.lastIndex + 1) {
    const { entry, hash } = pending[0]!;
    pending = pending.slice(1);
    try {
      state = applyEvent(state, entry);
    } catch (error) {
      if (!(error instanceof EventOrderError)) throw error;
      effects.push({ kind: 'rejected', index: entry.index, error: error.toJSON() });
      break;
    }
    recent = [...recent, { index: entry.index, hash }].slice(-limits.remember);
    effects.push({ kind: 'applied', index: entry.index, type: entry.event.type, entry });
  }
  const out = { state, pending, recent };
  return { buffer: out, effects: [...effects, ...gapOf(out)] };
}

function gapOf(buffer: EventBuffer): BufferEffect[] {
  const first = buffer.pending[0];
  if (!first) return [];
  return [{ kind: 'gap', from: buffer.state.lastIndex + 1, to: first.entry.index - 1 }];
}

/**
 * Installs a (decoded, digest-checked) snapshot. Refused when older than the current state, or at the same
 * index with a different digest, unless `force` (the cluster layer's call, e.g. after it truncated a divergent log).
 */
export function installSnapshot(
  buffer: EventBuffer,
  snapshot: StateSnapshot,
  opts: { force?: boolean } = {},
  limits: BufferLimits = DEFAULT_LIMITS,
): BufferStep {
  const current = buffer.state.lastIndex;
  const incoming = snapshot.state.lastIndex;
  if (!opts.force) {
    if (incoming < current)
      return {
        buffer,
        effects: [
          rejected(incoming, 'TORUS_EVENT_STALE', `snapshot at ${incoming} is older than the state at ${current}`),
        ],
      };
    if (incoming === current) {
      if (stateDigest(buffer.state) === snapshot.digest)
        return { buffer, effects: [{ kind: 'duplicate', index: incoming }] };
      return {
        buffer,
        effects: [
          rejected(
            incoming,
            'TORUS_EVENT_CONFLICT',
            `snapshot at ${incoming} differs from the state at the same index`,
          ),
        ],
      };
    }
  }
  const pending = buffer.pending.filter((p) => p.entry.index > incoming);
  const drained = drain({ state: snapshot.state, pending, recent: [] }, limits);
  return {
    buffer: drained.buffer,
    effects: [{ kind: 'installed', lastIndex: incoming, digest: snapshot.digest }, ...drained.effects],
  };
}
