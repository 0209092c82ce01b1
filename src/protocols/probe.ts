/**
 * Probe endpoints every node serves on its HTTP port (DESIGN.md §5, issue 3):
 * Every route but /node_id needs a proof of the data key (header x-torus-proof, probe-proof.ts) unless open mode.
 *   GET  /node_id                       → the node id as a JSON string (exo's contract: cheap identity checks)
 *   GET  /v1/identity                   → { nodeId, clusterName, incarnation }
 *   GET  /v1/probe/echo                 → a tiny body, for RTT samples on a kept-alive connection
 *   POST /v1/probe/sink                 → counts the request body; answers a SinkReport (client → server throughput)
 *   GET  /v1/probe/source?bytes=&ms=    → streams zeros, bounded in bytes and time (server → client throughput)
 *   GET  /v1/probe/stream?ms=&bytes=&streams=&session=
 *                                       → the capacity probe: an exclusive raw TCP stream of zeros (HTTP head, then
 *                                         bytes until the server closes; no chunking), see decodeStreamQuery
 * Decoders are strict and throw only ValidationError.
 */
import { guarded, id, int, num, obj, str } from '../core/topology/reader.js';
import { ValidationError } from '../core/errors.js';

export const PROBE_PATHS = {
  nodeId: '/node_id',
  identity: '/v1/identity',
  echo: '/v1/probe/echo',
  sink: '/v1/probe/sink',
  source: '/v1/probe/source',
  stream: '/v1/probe/stream',
} as const;

/** Response header of the stream route naming the answering node, so a prober never measures the wrong peer. */
export const PROBE_NODE_HEADER = 'x-torus-node-id';
/** Parallel connections one stream probe may open (they share one admission, see the gate in probe-handler.ts). */
export const MAX_PROBE_STREAMS = 8;
/** How long after its time bound a stream is cut when the client does not read it (a stalled probe frees the gate). */
export const PROBE_STREAM_GRACE_MS = 2000;
/** Bound on the HTTP head a stream prober accepts from a server before the raw bytes. */
export const MAX_PROBE_HEAD_BYTES = 16 * 1024;

/**
 * Throughput probes are exclusive, like an iperf3 server: a node's sink refuses (503 TORUS_PROBE_BUSY) a transfer
 * while it receives another one or while this node's own profiler is sending one. Without this, every node
 * measures at once when a cluster forms and the transfers share links, sinks and CPUs: on a 3-node lab a 5 Gbit/s
 * link was measured slower than the 1 Gbit/s LAN beside it. The measurer backs off and retries, and after
 * `PROBE_BUSY_BUDGET_MS` sends with the force header (measured anyway: a result beats none).
 */
export const PROBE_FORCE_HEADER = 'x-torus-probe-force';
export const PROBE_BUSY_BUDGET_MS = 10_000;
/** In-process channel (worker_threads BroadcastChannel) on which a node's profiler announces its own transfers. */
export const probeBusyChannelName = (nodeId: string): string => `torus-probe-measuring:${nodeId}`;

/** Hard server-side bounds: a probe can never be turned into a bandwidth hog. */
export const MAX_PROBE_BYTES = 1 << 30;
export const MAX_PROBE_MS = 5000;
/** `bytes` of /v1/probe/source is clamped to this (nothing in torus asks for more; the stream probe is the bulk one). */
export const MAX_SOURCE_BYTES = 64 << 20;
/** Largest request body /v1/probe/echo reads (its RTT samples send none). */
export const MAX_ECHO_BODY_BYTES = 64 * 1024;
/** Probe requests a node serves at once (bulk ones are exclusive anyway, see the gate). */
export const MAX_PROBES_IN_FLIGHT = 32;
/** Peer proofs on probe requests: header and format in probe-proof.ts. */
export { PROBE_PROOF_HEADER } from './probe-proof.js';

export interface ProbeIdentity {
  readonly nodeId: string;
  readonly clusterName: string;
  readonly incarnation: number;
}

/**
 * Receiver-side throughput: `bytes` over `seconds` (first to last byte) and the steady-state part that skips the
 * start (slow start and the tbf token bucket's initial burst inflate short transfers).
 */
export interface SinkReport {
  readonly bytes: number;
  readonly seconds: number;
  readonly steadyBytes: number;
  readonly steadySeconds: number;
  /** bits per second, from the steady part (or the whole transfer when too short to split) */
  readonly bps: number;
}

export function decodeNodeIdResponse(v: unknown): string {
  return guarded('body', () => id('body', v, 'node_id'));
}

export function decodeIdentity(v: unknown): ProbeIdentity {
  return guarded('body', () => {
    const o = obj('body', v, 'identity', ['nodeId', 'clusterName', 'incarnation']);
    return {
      nodeId: id('body', o.nodeId, 'identity.nodeId'),
      clusterName: str('body', o.clusterName, 'identity.clusterName', { max: 256 }),
      incarnation: int('body', o.incarnation, 'identity.incarnation'),
    };
  });
}

export function decodeSinkReport(v: unknown): SinkReport {
  return guarded('body', () => {
    const o = obj('body', v, 'sink', ['bytes', 'seconds', 'steadyBytes', 'steadySeconds', 'bps']);
    return {
      bytes: int('body', o.bytes, 'sink.bytes', 0, MAX_PROBE_BYTES),
      seconds: num('body', o.seconds, 'sink.seconds', 0, 3600),
      steadyBytes: int('body', o.steadyBytes, 'sink.steadyBytes', 0, MAX_PROBE_BYTES),
      steadySeconds: num('body', o.steadySeconds, 'sink.steadySeconds', 0, 3600),
      bps: num('body', o.bps, 'sink.bps', 0),
    };
  });
}

/** `?bytes=N&ms=T` of the source route, clamped to the hard bounds. */
export function decodeSourceQuery(params: URLSearchParams): { bytes: number; ms: number } {
  const read = (key: string, max: number, dflt: number): number => {
    const raw = params.get(key);
    if (raw === null) return dflt;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n)) throw new ValidationError('query', key, 'expected a non-negative integer');
    return Math.min(n, max);
  };
  return { bytes: read('bytes', MAX_SOURCE_BYTES, 64 << 20), ms: read('ms', MAX_PROBE_MS, 500) };
}

export interface StreamQuery {
  /** time bound of this stream, ms (≤ MAX_PROBE_MS) */
  readonly ms: number;
  /** byte bound of this stream (≤ MAX_PROBE_BYTES) */
  readonly bytes: number;
  /** how many connections the session opens (1..MAX_PROBE_STREAMS) */
  readonly streams: number;
  /** session id shared by those connections (client-chosen, [A-Za-z0-9_-]{1,32}) */
  readonly session: string;
}

/** `?ms=T&bytes=N&streams=S&session=ID` of the stream route: strict (unknown keys refused), clamped to the bounds. */
export function decodeStreamQuery(params: URLSearchParams): StreamQuery {
  for (const key of params.keys()) if (!['ms', 'bytes', 'streams', 'session'].includes(key)) throw new ValidationError('query', key, 'unknown parameter');
  const read = (key: string, min: number, max: number, dflt: number): number => {
    const raw = params.get(key);
    if (raw === null) return dflt;
    const n = Number(raw);
    if (!/^\d{1,16}$/.test(raw) || !Number.isSafeInteger(n) || n < min) throw new ValidationError('query', key, `expected an integer ≥ ${min}`);
    return Math.min(n, max);
  };
  const streams = read('streams', 1, MAX_PROBE_STREAMS, 1);
  if (Number(params.get('streams') ?? 1) > MAX_PROBE_STREAMS) throw new ValidationError('query', 'streams', `at most ${MAX_PROBE_STREAMS}`);
  const session = params.get('session') ?? 'single';
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(session)) throw new ValidationError('query', 'session', 'expected 1-32 characters [A-Za-z0-9_-]');
  return { ms: read('ms', 1, MAX_PROBE_MS, 500), bytes: read('bytes', 1, MAX_PROBE_BYTES, 256 << 20), streams, session };
}
