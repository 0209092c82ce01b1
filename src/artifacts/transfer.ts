/**
 * One artifact transfer: fetch every missing chunk from the sources that have it, several in flight, each verified
 * by the writer before it is written. A worker sends its next request as soon as a chunk has arrived, while that
 * chunk is hashed and written (at most `writeAhead` of them): at 4 Gbit/s a chunk's hash and disk write take about
 * as long as its trip, and waiting for them left the link idle half the time (measured in the lab). Every measured
 * address of a source is a lane of its own, used at the same time (a holder reached over a cable and the LAN sends
 * over both); each chunk goes to the lane that would finish it first, in flight plus one over its measured rate
 * (unmeasured lanes: by in-flight count, after the measured); a lane that fails is backed off (and its next
 * address tried); a chunk that fails verification is
 * fetched again from another source and the bad source reported. A source marked `waitForChunks` (the upstream of a broadcast chain) is asked for chunks it does not have yet and
 * answers when it has them; `fallback` sources are used only while no primary source can serve.
 * With `wanted` (a pipeline stage's chunks, docs/artifacts.md "Models") only those are fetched.
 * Ends when every chunk (every wanted chunk) is held, or fails with TORUS_ARTIFACT_UNAVAILABLE after `stallMs` without progress.
 */
import { asTorusError, TorusError } from '../protocols/errors.js';
import type { PeerClient } from './peer-client.js';
import { MAX_CHUNK_WAIT_MS } from './peer-paths.js';
import type { ArtifactWriter } from './writer.js';

export interface TransferSource {
  readonly nodeId: string;
  readonly urls: readonly string[];
  /** the upstream of a chain: ask for chunks it is still receiving */
  readonly waitForChunks?: boolean;
  /** only when no primary source can serve */
  readonly fallback?: boolean;
  /** a complete holder (no need to ask which chunks it has) */
  readonly complete?: boolean;
  /** measured bits/s of the first `rates.length` urls: each of those is a lane used at once (default: one lane) */
  readonly rates?: readonly number[];
}

export interface TransferStats {
  chunks: number;
  bytes: number;
  bySource: Record<string, { chunks: number; bytes: number }>;
  corrupt: Record<string, number>;
  failures: number;
}

export interface TransferOptions {
  readonly writer: ArtifactWriter;
  readonly sources: readonly TransferSource[];
  readonly client: PeerClient;
  /** only these chunks (1 = wanted); absent: every chunk */
  readonly wanted?: Uint8Array;
  readonly concurrency?: number;
  readonly perSource?: number;
  /** chunks received and not yet verified and written, at most (default: `concurrency`) */
  readonly writeAhead?: number;
  readonly stallMs?: number;
  readonly signal?: AbortSignal;
  readonly onChunk?: () => void;
  readonly onCorrupt?: (nodeId: string, index: number) => void;
  readonly onSourceError?: (nodeId: string, error: TorusError) => void;
}

/** What a source holds, shared by its lanes. */
interface Holding {
  have: Uint8Array | undefined;
  haveAt: number;
}

/** One lane: a source at one of its addresses. */
interface SourceState {
  readonly src: TransferSource;
  readonly holding: Holding;
  /** measured bits/s of this lane's address (undefined: not measured) */
  readonly rateBps: number | undefined;
  urlIndex: number;
  inFlight: number;
  failures: number;
  downUntil: number;
}

const PENDING = 0,
  IN_FLIGHT = 1,
  DONE = 2;
const SCAN_LIMIT = 4096;

export async function runTransfer(o: TransferOptions): Promise<TransferStats> {
  const { writer } = o;
  const id = writer.id;
  const n = writer.refs.length;
  const state = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (writer.have[i] || (o.wanted && !o.wanted[i])) state[i] = DONE;
  const banned = new Map<number, Set<string>>();
  const sources: SourceState[] = o.sources.flatMap((src) => {
    const holding: Holding = { have: undefined, haveAt: 0 };
    const lanes = Math.max(1, Math.min(src.rates?.length ?? 0, src.urls.length));
    return Array.from({ length: lanes }, (_, lane) => ({
      src,
      holding,
      rateBps: src.rates?.[lane],
      urlIndex: lane,
      inFlight: 0,
      failures: 0,
      downUntil: 0,
    }));
  });
  const stats: TransferStats = { chunks: 0, bytes: 0, bySource: {}, corrupt: {}, failures: 0 };
  const concurrency = Math.max(1, o.concurrency ?? 8);
  const perSource = o.perSource ?? 6;
  // Chunks received but not yet verified and written: bounds the memory a transfer holds (with those on the wire).
  const writeAhead = Math.max(1, o.writeAhead ?? concurrency);
  const stallMs = o.stallMs ?? 60_000;
  let cursor = 0;
  let lastProgress = Date.now();
  const wakers = new Set<() => void>();
  const changed = (): void => {
    for (const w of [...wakers]) w();
  };

  const holds = (s: SourceState, i: number): boolean =>
    !!(s.src.complete || s.src.waitForChunks || s.holding.have?.[i]);
  /** The lane that would finish one more chunk first: measured lanes by in-flight over rate, then the unmeasured. */
  const sooner = (a: SourceState, b: SourceState): boolean => {
    if ((a.rateBps === undefined) !== (b.rateBps === undefined)) return a.rateBps !== undefined;
    if (a.rateBps === undefined || b.rateBps === undefined) return a.inFlight < b.inFlight;
    return (a.inFlight + 1) / a.rateBps < (b.inFlight + 1) / b.rateBps;
  };
  const remaining = (): boolean => {
    while (cursor < n && state[cursor] === DONE) cursor++;
    return cursor < n;
  };

  const pick = (): { i: number; s: SourceState } | undefined => {
    const now = Date.now();
    const usable = sources.filter((s) => s.downUntil <= now && s.inFlight < perSource);
    const primaries = usable.filter((s) => !s.src.fallback);
    const anyPrimaryUp = sources.some((s) => !s.src.fallback && s.downUntil <= now);
    const pool = anyPrimaryUp ? primaries : usable;
    let scanned = 0;
    for (let i = cursor; i < n && scanned < SCAN_LIMIT; i++) {
      if (state[i] !== PENDING) continue;
      scanned++;
      const bad = banned.get(i);
      let best: SourceState | undefined;
      for (const s of pool) {
        if (!holds(s, i) || bad?.has(s.src.nodeId)) continue;
        if (!best || sooner(s, best)) best = s;
      }
      if (best) return { i, s: best };
    }
    return undefined;
  };

  const refreshHaves = async (): Promise<void> => {
    const now = Date.now();
    const asked = new Set<Holding>();
    await Promise.all(
      sources
        .filter((s) => !s.src.complete && !s.src.waitForChunks && s.downUntil <= now && now - s.holding.haveAt > 2000)
        .filter((s) => !asked.has(s.holding) && asked.add(s.holding))
        .map(async (s) => {
          s.holding.haveAt = now;
          try {
            s.holding.have = await o.client.have(s.src.urls[s.urlIndex]!, id, n);
          } catch (error) {
            fail(s, asTorusError(error));
          }
        }),
    );
  };

  const fail = (s: SourceState, error: TorusError): void => {
    stats.failures++;
    s.failures++;
    s.urlIndex = (s.urlIndex + 1) % s.src.urls.length;
    s.downUntil = Date.now() + Math.min(250 * 2 ** Math.min(s.failures, 5), 5000);
    o.onSourceError?.(s.src.nodeId, error);
  };

  /** Verifies and writes a received chunk; never throws (a failure puts the chunk back to fetch). */
  const store = async (i: number, s: SourceState, data: Uint8Array): Promise<void> => {
    const length = data.byteLength;
    let kept = false;
    try {
      kept = await writer.write(i, data);
    } catch (error) {
      state[i] = PENDING;
      const e = asTorusError(error);
      if (e.code !== 'TORUS_ARTIFACT_CORRUPT') {
        fail(s, e);
        return;
      }
      const set = banned.get(i) ?? new Set<string>();
      set.add(s.src.nodeId);
      banned.set(i, set);
      stats.corrupt[s.src.nodeId] = (stats.corrupt[s.src.nodeId] ?? 0) + 1;
      o.onCorrupt?.(s.src.nodeId, i);
      return;
    } finally {
      if (!kept) o.client.release(data); // written, refused or already held, and not kept to forward: reusable
      changed();
    }
    state[i] = DONE;
    s.failures = 0;
    lastProgress = Date.now();
    stats.chunks++;
    stats.bytes += length;
    const by = (stats.bySource[s.src.nodeId] ??= { chunks: 0, bytes: 0 });
    by.chunks++;
    by.bytes += length;
    o.onChunk?.();
  };

  /** Chunks received and being verified and written, while the workers already fetch the next ones. */
  const storing = new Set<Promise<void>>();

  const fetchOne = async (i: number, s: SourceState): Promise<void> => {
    state[i] = IN_FLIGHT;
    s.inFlight++;
    let data: Uint8Array;
    try {
      data = await o.client.chunk(s.src.urls[s.urlIndex]!, id, i, s.src.waitForChunks ? MAX_CHUNK_WAIT_MS : 0);
    } catch (error) {
      state[i] = PENDING;
      const e = asTorusError(error);
      if (e.code === 'TORUS_ARTIFACT_UNAVAILABLE' && s.holding.have)
        s.holding.have[i] = 0; // it does not have that one (any more)
      else fail(s, e);
      return;
    } finally {
      s.inFlight--;
      changed();
    }
    // The request that follows goes out now: verifying and writing (a hash, a disk write) would otherwise leave the
    // link idle for as long as they take, on every worker.
    const p = store(i, s, data).finally(() => storing.delete(p));
    storing.add(p);
  };

  const worker = async (): Promise<void> => {
    while (remaining() && !o.signal?.aborted) {
      while (storing.size >= writeAhead) await Promise.race(storing);
      const next = pick();
      if (next) {
        await fetchOne(next.i, next.s);
        continue;
      }
      if (Date.now() - lastProgress > stallMs) return;
      await refreshHaves();
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(t);
          wakers.delete(done);
          resolve();
        };
        const t = setTimeout(done, 200);
        wakers.add(done);
      });
    }
  };

  await refreshHaves();
  await Promise.all(Array.from({ length: concurrency }, worker));
  await Promise.all(storing);
  if (o.signal?.aborted)
    throw new TorusError('TORUS_CANCELLED', `transfer of ${id} cancelled`, { id, held: writer.count });
  if (remaining()) {
    throw new TorusError(
      'TORUS_ARTIFACT_UNAVAILABLE',
      `no source served artifact ${id} for ${Math.round(stallMs / 1000)} s: ${writer.count}/${n} chunks held${o.wanted ? ` (${writer.targetCount} of the stage's)` : ''} (it resumes from them)`,
      { id, held: writer.count, chunks: n, sources: o.sources.map((s) => s.nodeId) },
    );
  }
  return stats;
}
