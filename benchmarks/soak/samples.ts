/**
 * What the soak benchmark samples of one node process, and the slope of a series (least squares): /proc for RSS,
 * threads and open fds, a walk of the data dir for its bytes, and `/metrics` for the heap of each thread.
 * A figure the sample could not get is missing (NaN, `null` in the samples file), never 0: a scrape that failed
 * (`metricsError`) has no heap figures at all, and a thread that did not answer the node in time
 * (`torus_thread_metrics_answered 0`, listed in `threadsMissing`) has none of its own and leaves the sums over
 * threads missing, so "RSS outside the heaps" is not RSS less a partial sum.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface Sample {
  readonly atMs: number;
  readonly rssBytes: number;
  /** RSS split as the kernel counts it: anonymous (malloc, JS heaps) and file-backed (code, mapped files). */
  readonly rssAnonBytes: number;
  readonly rssFileBytes: number;
  readonly threads: number;
  readonly fds: number;
  readonly dataDirBytes: number;
  /** V8 heap in use per thread (main and each actor), from torus_thread_heap_used_bytes. */
  readonly heapBytes: Readonly<Record<string, number>>;
  /** V8 heap committed, summed over threads (torus_thread_heap_total_bytes): what RSS holds of the heaps. */
  readonly heapTotalBytes: number;
  readonly heapTotalByThread: Readonly<Record<string, number>>;
  /** Heap in use just after each thread's last full collection (torus_thread_heap_live_bytes): its live objects.
   *  The sum counts a thread not yet fully collected (an idle one may go long without) by its heap in use. */
  readonly heapLiveBytes: number;
  readonly heapLiveByThread: Readonly<Record<string, number>>;
  /** Outside the heaps, summed over threads: Buffers/ArrayBuffers (torus_thread_external_bytes) and V8's own
   *  allocations (torus_thread_malloced_bytes). */
  readonly externalBytes: number;
  readonly mallocedBytes: number;
  /** The same two, per thread. */
  readonly externalByThread: Readonly<Record<string, number>>;
  readonly mallocedByThread: Readonly<Record<string, number>>;
  /** Full collections the threads ran themselves after --idle-gc-minutes without one, summed. */
  readonly idleCollections: number;
  /** The node's role in the cluster (torus_node_info): the leader does more work, so compare like with like. */
  readonly role?: string;
  /** The scrape of /metrics failed (why): every figure from it is missing in this sample. */
  readonly metricsError?: string;
  /** Threads the node said did not answer this scrape: their figures, and every sum over threads, are missing. */
  readonly threadsMissing: readonly string[];
}

/** The node's own process: `ip netns exec` execs it, but a wrapper may sit in between: follow to the node child. */
export function nodePid(pid: number): number {
  for (let depth = 0, p = pid; depth < 3; depth++) {
    if (readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'node') return p;
    const children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    if (!children[0]) break;
    p = Number(children[0]);
  }
  return pid;
}

function statusField(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

export function dirBytes(dir: string): number {
  let total = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      const s = statSync(path);
      total += s.isDirectory() ? dirBytes(path) : s.size;
    } catch {
      /* removed meanwhile */
    }
  }
  return total;
}

/** One per-thread family of /metrics, by thread. */
export function perThread(text: string, family: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${family}\\{thread="([^"]+)"\\} (\\d+(?:\\.\\d+)?)`, 'gm')))
    out[m[1]!] = Number(m[2]);
  return out;
}

export function heapFromMetrics(text: string): Record<string, number> {
  return perThread(text, 'torus_thread_heap_used_bytes');
}

function roleOf(text: string): { role?: string } {
  const role = /^torus_node_info\{[^}]*\brole="([^"]+)"/m.exec(text)?.[1];
  return role ? { role } : {};
}

/** The roles a node had over a series, in order, each once in a row: `follower`, `leader→follower`. */
export function rolesOf(series: readonly Pick<Sample, 'role'>[]): string {
  const roles: string[] = [];
  for (const s of series) if (s.role && roles.at(-1) !== s.role) roles.push(s.role);
  return roles.join('→');
}

const sum = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);

/** Threads the node listed as not answering this scrape (torus_thread_metrics_answered 0). */
export function unansweredThreads(text: string): string[] {
  return Object.entries(perThread(text, 'torus_thread_metrics_answered'))
    .filter(([, answered]) => answered === 0)
    .map(([thread]) => thread)
    .sort();
}

/** A sum over threads, missing (NaN) when a thread is. */
const sumOrMissing = (r: Record<string, number>, missing: boolean): number => (missing ? Number.NaN : sum(r));

/**
 * One sample of the node process: /proc and the data dir always; the heap figures from `metricsText`, unless the
 * scrape failed (`metricsError`), when they are all missing.
 */
export function sampleProcess(pid: number, dataDir: string, metricsText: string, metricsError?: string): Sample {
  const proc = {
    atMs: Date.now(),
    rssBytes: statusField(pid, 'VmRSS') * 1024,
    rssAnonBytes: statusField(pid, 'RssAnon') * 1024,
    rssFileBytes: statusField(pid, 'RssFile') * 1024,
    threads: statusField(pid, 'Threads'),
    fds: readdirSync(`/proc/${pid}/fd`).length,
    dataDirBytes: dirBytes(dataDir),
  };
  if (metricsError !== undefined)
    return {
      ...proc,
      heapBytes: {},
      heapTotalBytes: Number.NaN,
      heapTotalByThread: {},
      heapLiveBytes: Number.NaN,
      heapLiveByThread: {},
      externalBytes: Number.NaN,
      mallocedBytes: Number.NaN,
      externalByThread: {},
      mallocedByThread: {},
      idleCollections: Number.NaN,
      metricsError,
      threadsMissing: [],
    };
  const threadsMissing = unansweredThreads(metricsText);
  const partial = threadsMissing.length > 0;
  const externalByThread = perThread(metricsText, 'torus_thread_external_bytes');
  const mallocedByThread = perThread(metricsText, 'torus_thread_malloced_bytes');
  const heapTotalByThread = perThread(metricsText, 'torus_thread_heap_total_bytes');
  const heapLiveByThread = perThread(metricsText, 'torus_thread_heap_live_bytes');
  const heapBytes = heapFromMetrics(metricsText);
  return {
    ...proc,
    heapBytes,
    heapTotalBytes: sumOrMissing(heapTotalByThread, partial),
    heapTotalByThread,
    heapLiveBytes: partial
      ? Number.NaN
      : Object.entries(heapBytes).reduce((total, [thread, used]) => total + (heapLiveByThread[thread] ?? used), 0),
    heapLiveByThread,
    externalBytes: sumOrMissing(externalByThread, partial),
    mallocedBytes: sumOrMissing(mallocedByThread, partial),
    externalByThread,
    mallocedByThread,
    idleCollections: sumOrMissing(perThread(metricsText, 'torus_thread_idle_collections_total'), partial),
    ...roleOf(metricsText),
    threadsMissing,
  };
}

/** Samples of a series whose figure is missing (NaN): the table says how many a row's slope went without. */
export function missingCount<S>(series: readonly S[], pick: (s: S) => number): number {
  return series.filter((s) => !Number.isFinite(pick(s))).length;
}

/**
 * The lowest point of each window of `windowMs`, counted from the first point. A collected heap drops back to its
 * live size after each major GC, whenever V8 runs one; what it keeps committed in between moves the peaks, not the
 * floor. A leak raises the floor, so its slope tells the two apart where the slope of every sample follows GC waves.
 */
export function floorPerWindow(
  points: readonly { atMs: number; y: number }[],
  windowMs: number,
): { atMs: number; y: number }[] {
  const first = points[0];
  if (!first || !(windowMs > 0)) return [];
  const lowest = new Map<number, { atMs: number; y: number }>();
  for (const p of points) {
    if (!Number.isFinite(p.y)) continue;
    const w = Math.floor((p.atMs - first.atMs) / windowMs);
    const seen = lowest.get(w);
    if (!seen || p.y < seen.y) lowest.set(w, p);
  }
  return [...lowest.entries()].sort(([a], [b]) => a - b).map(([, p]) => p);
}

/** Least-squares slope of (t ms, y) in y per hour over the finite points; NaN with fewer than two. */
export function slopePerHour(all: readonly { atMs: number; y: number }[]): number {
  const points = all.filter((p) => Number.isFinite(p.y));
  if (points.length < 2) return NaN;
  const n = points.length;
  const mt = points.reduce((s, p) => s + p.atMs, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.atMs - mt) * (p.y - my);
    den += (p.atMs - mt) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 3_600_000;
}
