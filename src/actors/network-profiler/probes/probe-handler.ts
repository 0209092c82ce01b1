/**
 * The probe routes (src/protocols/probe.ts) as one `(req, res) => boolean` the node's HTTP server mounts: it
 * returns true when it handled the request, false to let the server route it elsewhere.
 *
 * Only `/node_id` is anonymous. Every other probe route needs a proof of the data key (protocols/probe-proof.ts;
 * 401 TORUS_UNAUTHENTICATED without one), except in open mode (no key). The force header counts only with a
 * proof. Sizes are bounded (echo body, source bytes) and so is the number of probe requests served at once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { PROBE_PROOF_HEADER, ProofChecker } from '../../../protocols/probe-proof.js';
import {
  decodeSourceQuery,
  MAX_ECHO_BODY_BYTES,
  MAX_PROBE_BYTES,
  MAX_PROBES_IN_FLIGHT,
  MAX_PROBE_MS,
  PROBE_FORCE_HEADER,
  PROBE_PATHS,
  PROBE_STREAM_GRACE_MS,
  type ProbeIdentity,
} from '../../../protocols/probe.js';
import { ProbeGate } from './probe-gate.js';
import { serveStream } from './stream-source.js';
import { steadyRate, type Sample } from './rate.js';

/**
 * `awaitingContinue`: the request carries `Expect: 100-continue` and the server (its `checkContinue` listener) left
 * the decision to us: the sink refuses a busy probe before any body is sent, and the other routes continue.
 */
export type ProbeHandler = (req: IncomingMessage, res: ServerResponse, awaitingContinue?: boolean) => boolean;

const ZEROS = Buffer.alloc(256 * 1024);

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

function refuseBusy(req: IncomingMessage, res: ServerResponse): void {
  // Drain (not destroy): the client is still sending and must read this answer rather than a reset.
  req.resume();
  req.on('error', () => undefined);
  res.setHeader('retry-after', '1');
  sendJson(res, 503, {
    error: { code: 'TORUS_PROBE_BUSY', message: 'another throughput probe is running on this node', details: {} },
  });
}

/** `refuse`, for a route handler that answers "handled". */
function refused(req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string): true {
  refuse(req, res, status, code, message);
  return true;
}

function refuse(req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string): void {
  req.resume();
  req.on('error', () => undefined);
  res.shouldKeepAlive = false;
  sendJson(res, status, { error: { code, message, details: {} } });
}

function sink(
  req: IncomingMessage,
  res: ServerResponse,
  gate: ProbeGate,
  awaitingContinue: boolean,
  force: boolean,
): void {
  const lease = gate.acquire(force);
  if (!lease) return refuseBusy(req, res);
  if (awaitingContinue) res.writeContinue();
  const release = (): void => {
    lease.release();
    clearTimeout(cap);
    clearTimeout(idle);
  };
  req.once('close', release);
  // A client that stops sending (or never starts) must not hold the gate: cut after PROBE_STREAM_GRACE_MS without
  // a byte, and in any case after the transfer bound plus that grace.
  const cut = (): void => {
    release();
    req.socket?.destroy();
  };
  const cap = setTimeout(cut, MAX_PROBE_MS + PROBE_STREAM_GRACE_MS);
  let idle = setTimeout(cut, PROBE_STREAM_GRACE_MS);
  const samples: Sample[] = [];
  let t0 = 0;
  let total = 0;
  let over = false;
  req.on('data', (chunk: Buffer) => {
    clearTimeout(idle);
    idle = setTimeout(cut, PROBE_STREAM_GRACE_MS);
    const now = performance.now();
    if (total === 0) t0 = now;
    total += chunk.length;
    const t = now - t0;
    // Keep at most one sample per 0.5 ms: enough resolution, bounded memory at any rate.
    const prev = samples[samples.length - 1];
    if (prev && t - prev[0] < 0.5) samples[samples.length - 1] = [prev[0], total];
    else samples.push([t, total]);
    if (!over && (total > MAX_PROBE_BYTES || t > MAX_PROBE_MS * 2)) {
      over = true;
      sendJson(res, 413, {
        error: { code: 'TORUS_API_BODY_TOO_LARGE', message: 'probe transfer exceeds its bounds', details: {} },
      });
      req.destroy();
    }
  });
  req.on('end', () => {
    release();
    if (!over) sendJson(res, 200, steadyRate(samples));
  });
  req.on('error', () => undefined);
}

function source(
  req: IncomingMessage,
  res: ServerResponse,
  params: URLSearchParams,
  gate: ProbeGate,
  force: boolean,
): void {
  let bounds: { bytes: number; ms: number };
  try {
    bounds = decodeSourceQuery(params);
  } catch (error) {
    sendJson(res, 400, { error: { code: 'TORUS_API_VALIDATION', message: (error as Error).message, details: {} } });
    return;
  }
  // A bulk transfer like the sink's: exclusive on this node unless a proven caller forces it.
  const lease = gate.acquire(force);
  if (!lease) return refuseBusy(req, res);
  res.once('close', () => lease.release());
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' });
  const t0 = performance.now();
  let sent = 0;
  const pump = (): void => {
    while (sent < bounds.bytes && performance.now() - t0 < bounds.ms) {
      const n = Math.min(ZEROS.length, bounds.bytes - sent);
      sent += n;
      if (!res.write(n === ZEROS.length ? ZEROS : ZEROS.subarray(0, n))) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  // A client that stops reading never drains the writes: cut it after the time bound plus a grace.
  const cap = setTimeout(() => res.destroy(), bounds.ms + PROBE_STREAM_GRACE_MS);
  res.on('close', () => {
    clearTimeout(cap);
    res.removeAllListeners('drain');
  });
  pump();
}

/**
 * `"busy"` instead of `"ok"` while this node's probe gate is held: a capacity probe is filling this node's port, so
 * the round trip just timed includes that probe's queue (measureRtt sets such samples aside).
 */
function echo(req: IncomingMessage, res: ServerResponse, gate: ProbeGate): void {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_ECHO_BODY_BYTES)
    return refuse(req, res, 413, 'TORUS_API_BODY_TOO_LARGE', `echo bodies are at most ${MAX_ECHO_BODY_BYTES} bytes`);
  let n = 0;
  let over = false;
  req.on('data', (c: Buffer) => {
    n += c.length;
    if (n > MAX_ECHO_BODY_BYTES && !over) {
      over = true;
      res.shouldKeepAlive = false;
      sendJson(res, 413, {
        error: {
          code: 'TORUS_API_BODY_TOO_LARGE',
          message: `echo bodies are at most ${MAX_ECHO_BODY_BYTES} bytes`,
          details: {},
        },
      });
      req.destroy();
    }
  });
  req.on('error', () => undefined);
  req.on('end', () => {
    if (!over) sendJson(res, 200, gate.busy() ? 'busy' : 'ok');
  });
}

export interface ProbeHandlerOptions {
  /** The data-plane key (`keys.dataKey`); null in open mode (--insecure-open): no proofs asked. */
  readonly dataKey: string | null;
  readonly now?: () => number;
  /** The node's probe gate (default: a new one); passed in where a caller must observe it. */
  readonly gate?: ProbeGate;
}

export function createProbeHandler(identity: () => ProbeIdentity, options: ProbeHandlerOptions): ProbeHandler {
  const gate = options.gate ?? new ProbeGate(identity().nodeId);
  const checker = options.dataKey === null ? null : new ProofChecker(options.dataKey, options.now);
  let inFlight = 0;
  return (req, res, awaitingContinue = false) => {
    const url = new URL(req.url ?? '/', 'http://probe');
    const method = req.method ?? 'GET';
    if (url.pathname !== PROBE_PATHS.nodeId && !(Object.values(PROBE_PATHS) as string[]).includes(url.pathname))
      return false;
    const isSink = url.pathname === PROBE_PATHS.sink && method === 'POST';
    const handled = (): true => {
      if (awaitingContinue && !isSink) res.writeContinue();
      return true;
    };
    if (url.pathname === PROBE_PATHS.nodeId) {
      if (method !== 'GET' && method !== 'HEAD') return false;
      handled();
      sendJson(res, 200, identity().nodeId);
      return true;
    }
    if (checker) {
      const verdict = checker.check(req.headers[PROBE_PROOF_HEADER], method, req.url ?? '/');
      if (!verdict.ok) {
        refuse(
          req,
          res,
          401,
          'TORUS_UNAUTHENTICATED',
          `probe routes need a proof of the cluster key (${PROBE_PROOF_HEADER}): ${verdict.why}`,
        );
        return true;
      }
    }
    // Proven (or open mode): only then may the caller skip the one-at-a-time gate.
    const force = req.headers[PROBE_FORCE_HEADER] === '1';
    if (inFlight >= MAX_PROBES_IN_FLIGHT) {
      res.setHeader('retry-after', '1');
      refuse(req, res, 503, 'TORUS_PROBE_BUSY', `${MAX_PROBES_IN_FLIGHT} probe requests in progress on this node`);
      return true;
    }
    inFlight++;
    res.once('close', () => inFlight--);
    switch (url.pathname) {
      case PROBE_PATHS.identity: {
        if (method !== 'GET' && method !== 'HEAD')
          return refused(req, res, 405, 'TORUS_API_METHOD_NOT_ALLOWED', 'GET only');
        handled();
        const { nodeId, clusterName, incarnation } = identity();
        sendJson(res, 200, { nodeId, clusterName, incarnation });
        return true;
      }
      case PROBE_PATHS.echo:
        handled();
        echo(req, res, gate);
        return true;
      case PROBE_PATHS.sink:
        if (method !== 'POST') return refused(req, res, 405, 'TORUS_API_METHOD_NOT_ALLOWED', 'POST only');
        sink(req, res, gate, awaitingContinue, force);
        return true;
      case PROBE_PATHS.stream:
        if (method !== 'GET') return refused(req, res, 405, 'TORUS_API_METHOD_NOT_ALLOWED', 'GET only');
        handled();
        serveStream(req, res, url.searchParams, gate, identity().nodeId, force);
        return true;
      default:
        if (method !== 'GET') return refused(req, res, 405, 'TORUS_API_METHOD_NOT_ALLOWED', 'GET only');
        handled();
        req.resume();
        source(req, res, url.searchParams, gate, force);
        return true;
    }
  };
}
