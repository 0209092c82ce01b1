/**
 * Probe endpoints every node serves on its HTTP port (docs/profiler.md):
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
import { ValidationError } from './errors.js';
import { CLOSED, Count, Id } from './event-fields.js';
import { compileWire, Type, type Shape } from './schema-kit.js';

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

/** `GET /v1/identity`'s answer. */
export const ProbeIdentity = Type.Object(
  { nodeId: Id, clusterName: Type.String({ maxLength: 256 }), incarnation: Count() },
  CLOSED,
);
export type ProbeIdentity = Shape<typeof ProbeIdentity>;

/**
 * `POST /v1/probe/sink`'s answer, receiver-side throughput: `bytes` over `seconds` (first to last byte) and the
 * steady-state part that skips the start (slow start and the tbf token bucket's initial burst inflate short
 * transfers); `bps`, bits per second, from the steady part (or the whole transfer when too short to split).
 */
export const SinkReport = Type.Object(
  {
    bytes: Count(0, MAX_PROBE_BYTES),
    seconds: Type.Number({ minimum: 0, maximum: 3600 }),
    steadyBytes: Count(0, MAX_PROBE_BYTES),
    steadySeconds: Type.Number({ minimum: 0, maximum: 3600 }),
    bps: Type.Number({ minimum: 0 }),
  },
  CLOSED,
);
export type SinkReport = Shape<typeof SinkReport>;

/** Every JSON answer of the probe routes by path (`/node_id` answers the node id as a JSON string). */
export const ProbeAnswers = { nodeId: Id, identity: ProbeIdentity, sink: SinkReport };

// Peers' answers: checked as `body` (TORUS_API_VALIDATION) in the wire decoders' words, as before the schemas.
const nodeIdCodec = compileWire(Id, 'body', 'node_id');
const identityCodec = compileWire(ProbeIdentity, 'body', 'identity');
const sinkCodec = compileWire(SinkReport, 'body', 'sink');

export function decodeNodeIdResponse(v: unknown): string {
  return nodeIdCodec.decode(v);
}

export function decodeIdentity(v: unknown): ProbeIdentity {
  return { ...identityCodec.decode(v) };
}

export function decodeSinkReport(v: unknown): SinkReport {
  return { ...sinkCodec.decode(v) };
}

/** The source route's query, parsed: its shape. */
export const SourceQuery = Type.Object(
  {
    bytes: Type.Integer({ minimum: 0, maximum: MAX_SOURCE_BYTES }),
    ms: Type.Integer({ minimum: 0, maximum: MAX_PROBE_MS }),
  },
  CLOSED,
);
export type SourceQuery = Shape<typeof SourceQuery>;

/** `?bytes=N&ms=T` of the source route, clamped to the hard bounds. */
export function decodeSourceQuery(params: URLSearchParams): SourceQuery {
  const read = (key: string, max: number, dflt: number): number => {
    const raw = params.get(key);
    if (raw === null) return dflt;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n))
      throw new ValidationError('query', key, 'expected a non-negative integer');
    return Math.min(n, max);
  };
  return { bytes: read('bytes', MAX_SOURCE_BYTES, 64 << 20), ms: read('ms', MAX_PROBE_MS, 500) };
}

/** The stream route's query, parsed (the query string stays a small parser, decodeStreamQuery): its shape. */
export const StreamQuery = Type.Object(
  {
    ms: Type.Integer({ minimum: 1, maximum: MAX_PROBE_MS, description: 'time bound of this stream, ms' }),
    bytes: Type.Integer({ minimum: 1, maximum: MAX_PROBE_BYTES, description: 'byte bound of this stream' }),
    streams: Type.Integer({
      minimum: 1,
      maximum: MAX_PROBE_STREAMS,
      description: 'how many connections the session opens',
    }),
    session: Type.String({
      pattern: '^[A-Za-z0-9_-]{1,32}$',
      description: 'session id shared by those connections (client-chosen)',
    }),
  },
  CLOSED,
);
export type StreamQuery = Shape<typeof StreamQuery>;

/** `?ms=T&bytes=N&streams=S&session=ID` of the stream route: strict (unknown keys refused), clamped to the bounds. */
export function decodeStreamQuery(params: URLSearchParams): StreamQuery {
  for (const key of params.keys())
    if (!['ms', 'bytes', 'streams', 'session'].includes(key))
      throw new ValidationError('query', key, 'unknown parameter');
  const read = (key: string, min: number, max: number, dflt: number): number => {
    const raw = params.get(key);
    if (raw === null) return dflt;
    const n = Number(raw);
    if (!/^\d{1,16}$/.test(raw) || !Number.isSafeInteger(n) || n < min)
      throw new ValidationError('query', key, `expected an integer ≥ ${min}`);
    return Math.min(n, max);
  };
  const streams = read('streams', 1, MAX_PROBE_STREAMS, 1);
  if (Number(params.get('streams') ?? 1) > MAX_PROBE_STREAMS)
    throw new ValidationError('query', 'streams', `at most ${MAX_PROBE_STREAMS}`);
  const session = params.get('session') ?? 'single';
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(session))
    throw new ValidationError('query', 'session', 'expected 1-32 characters [A-Za-z0-9_-]');
  return {
    ms: read('ms', 1, MAX_PROBE_MS, 500),
    bytes: read('bytes', 1, MAX_PROBE_BYTES, 256 << 20),
    streams,
    session,
  };
}
