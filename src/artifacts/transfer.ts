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
 * Consecutive chunks a lane holds go out as one request for the run (peer-runs.ts, up to `runBytes`): one request
 * per chunk cost a holder and a receiver more CPU than the bytes themselves at small chunk sizes. Each chunk of a
 * run is verified and written as it arrives; a corrupt one is fetched again like a single one, and when a run is
 * cut the chunks not yet whole go back to be fetched. A holder that answers the run route with 404/405 (an older
 * node) is asked chunk by chunk from then on.
 * Ends when every chunk (every wanted chunk) is held, or fails with TORUS_ARTIFACT_UNAVAILABLE after `stallMs` without progress.
 */
import { asTorusError, TorusError } from '../protocols/errors.js';
import type { PeerClient } from './peer-client.js';
import { MAX_CHUNK_WAIT_MS, MAX_RUN_BYTES, MAX_RUN_CHUNKS } from './peer-paths.js';
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
  /** bytes asked for in one request for consecutive chunks (default RUN_BYTES; 0: one chunk per request) */
  readonly runBytes?: number;
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
  /** it serves runs of chunks (false once it answered like a node without the route) */
  runs: boolean;
}

/** One lane: a source at one of its addresses. */
interface SourceState {
  readonly src: TransferSource;
  readonly holding: Holding;
  /** measured bits/s of this lane's address (undefined: not measured) */
  readonly rateBps: number | undefined;
  urlIndex: number;
  /** requests in flight (bounded by perSource) */
  inFlight: number;
  /** chunks in flight (a run counts each of its chunks): what `sooner` weighs */
  inFlightChunks: number;
  failures: number;
  downUntil: number;
}

const PENDING = 0,
  IN_FLIGHT = 1,
  DONE = 2;
const SCAN_LIMIT = 4096;
/**
 * A few MiB per request: big enough that per-request costs are small next to the bytes, small enough that a stage's
 * chunks still spread over several holders and a slow holder holds back little at the end.
 */
export const RUN_BYTES = 4 * 1024 * 1024;

const inRun = (index: unknown, from: number, to: number): boolean =>
  typeof index === 'number' && Number.isInteger(index) && index >= from && index < to;

/** An answer that says the peer does not know the run route (a node from before it): ask it chunk by chunk. */
function noRunRoute(e: TorusError): boolean {
  return (
    e.code === 'TORUS_API_NOT_FOUND' ||
    e.code === 'TORUS_API_METHOD_NOT_ALLOWED' ||
    (e.code === 'TORUS_API_UNREACHABLE' && (e.details.status === 404 || e.details.status === 405))
  );
}

export async function runTransfer(o: TransferOptions): Promise<TransferStats> {
  const { writer } = o;
  const id = writer.id;
  const n = writer.refs.length;
  const state = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (writer.have[i] || (o.wanted && !o.wanted[i])) state[i] = DONE;
  const banned = new Map<number, Set<string>>();
  const sources: SourceState[] = o.sources.flatMap((src) => {
    const holding: Holding = { have: undefined, haveAt: 0, runs: true };
    const lanes = Math.max(1, Math.min(src.rates?.length ?? 0, src.urls.length));
    return Array.from({ length: lanes }, (_, lane) => ({
      src,
      holding,
      rateBps: src.rates?.[lane],
      urlIndex: lane,
      inFlight: 0,
      inFlightChunks: 0,
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
  const lengths = writer.refs.map((r) => r.length);
  const runBytes = Math.min(o.runBytes ?? RUN_BYTES, MAX_RUN_BYTES);
  const maxRun = Math.min(MAX_RUN_CHUNKS, Math.floor(runBytes / writer.manifest.chunkSize));
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
    if (a.rateBps === undefined || b.rateBps === undefined) return a.inFlightChunks < b.inFlightChunks;
    return (a.inFlightChunks + 1) / a.rateBps < (b.inFlightChunks + 1) / b.rateBps;
  };
  const remaining = (): boolean => {
    while (cursor < n && state[cursor] === DONE) cursor++;
    return cursor < n;
  };

  const pick = (): { i: number; s: SourceState; pool: readonly SourceState[] } | undefined => {
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
      if (best) return { i, s: best, pool };
    }
    return undefined;
  };

  /**
   * The end (exclusive) of the run lane `s` is asked for from chunk `i`: pending chunks it holds, up to runBytes,
   * and at most the lane's share of what is left among the usable lanes (by measured rate when all are measured,
   * else even), so a small stage still spreads over them.
   */
  const runEnd = (i: number, s: SourceState, pool: readonly SourceState[]): number => {
    let end = i + 1;
    if (maxRun <= 1 || !s.holding.runs || s.src.waitForChunks) return end;
    let pending = 0;
    for (let k = cursor; k < n; k++) if (state[k] === PENDING) pending++;
    const measured = pool.every((l) => l.rateBps !== undefined);
    const weight = (l: SourceState): number => (measured ? l.rateBps! : 1);
    const share = weight(s) / pool.reduce((sum, l) => sum + weight(l), 0);
    const most = Math.min(maxRun, Math.ceil(pending * share));
    for (let bytes = lengths[i]!; end < n && end - i < most; end++) {
      if (state[end] !== PENDING || !holds(s, end) || banned.get(end)?.has(s.src.nodeId)) break;
      if (bytes + lengths[end]! > runBytes) break;
      bytes += lengths[end]!;
    }
    return end;
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
    s.inFlightChunks++;
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
      s.inFlightChunks--;
      changed();
    }
    // The request that follows goes out now: verifying and writing (a hash, a disk write) would otherwise leave the
    // link idle for as long as they take, on every worker.
    const p = store(i, s, data).finally(() => storing.delete(p));
    storing.add(p);
  };

  /** Chunks i..end-1 in one request, each verified and written as it arrives whole. */
  const fetchRun = async (i: number, end: number, s: SourceState): Promise<void> => {
    state.fill(IN_FLIGHT, i, end);
    s.inFlight++;
    s.inFlightChunks += end - i;
    let arrived = i;
    try {
      await o.client.run(s.src.urls[s.urlIndex]!, id, i, lengths.slice(i, end), (k, data) => {
        arrived = k + 1;
        const p = store(k, s, data).finally(() => storing.delete(p));
        storing.add(p);
      });
    } catch (error) {
      state.fill(PENDING, arrived, end); // the chunks that arrived whole are being stored; the rest is asked again
      const e = asTorusError(error);
      if (arrived === i && noRunRoute(e)) s.holding.runs = false;
      else if (e.code === 'TORUS_ARTIFACT_UNAVAILABLE' && s.holding.have && inRun(e.details.index, i, end)) {
        s.holding.have[e.details.index as number] = 0; // a partial holder without it (any more)
        s.holding.haveAt = 0; // ask it again what it has
      } else fail(s, e);
    } finally {
      s.inFlight--;
      s.inFlightChunks -= end - i;
      changed();
    }
  };

  const worker = async (): Promise<void> => {
    while (remaining() && !o.signal?.aborted) {
      while (storing.size >= writeAhead) await Promise.race(storing);
      const next = pick();
      if (next) {
        const end = runEnd(next.i, next.s, next.pool);
        await (end > next.i + 1 ? fetchRun(next.i, end, next.s) : fetchOne(next.i, next.s));
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
