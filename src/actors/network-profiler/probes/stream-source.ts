/**
 * Server side of the capacity probe (`GET /v1/probe/stream`, protocols/probe.ts): after a normal HTTP head the
 * response is raw zeros written in 1 MiB blocks until the time or byte bound, then the connection closes (no
 * chunked framing: the body ends with the connection). The prober reads it with a reusable buffer
 * (stream-probe.ts), so both ends cost little CPU per byte and the rate is the link's, not Node's HTTP stack's
 * (the old upload to /v1/probe/sink read 0.6–0.9× iperf3 at 5 Gbit/s on a loaded 2-core machine).
 *
 * Safety: the query is decoded strictly; a stream is admitted only through the node's probe gate (exclusive per
 * node, 503 TORUS_PROBE_BUSY otherwise); every stream is cut PROBE_STREAM_GRACE_MS after its time bound even when
 * the client stops reading (writes then never drain), so no client can hold the gate or a socket for longer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import {
  decodeStreamQuery,
  PROBE_NODE_HEADER,
  PROBE_STREAM_GRACE_MS,
  type StreamQuery,
} from '../../../protocols/probe.js';
import type { ProbeGate } from './probe-gate.js';

const BLOCK = Buffer.alloc(1 << 20);

function answer(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify({ error: { code, message, details: {} } });
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    connection: 'close',
    ...headers,
  });
  res.end(text);
}

/** `force`: the caller proved the key and asks to skip the gate (probe-handler.ts decides). */
export function serveStream(
  req: IncomingMessage,
  res: ServerResponse,
  params: URLSearchParams,
  gate: ProbeGate,
  nodeId: string,
  force: boolean,
): void {
  req.resume();
  req.on('error', () => undefined);
  let q: StreamQuery;
  try {
    q = decodeStreamQuery(params);
  } catch (error) {
    return answer(res, 400, 'TORUS_API_VALIDATION', (error as Error).message);
  }
  const lease = gate.admitStream(q.session, q.streams, force, q.ms);
  if (!lease)
    return answer(res, 503, 'TORUS_PROBE_BUSY', 'another throughput probe is running on this node', {
      'retry-after': '1',
    });
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    lease.release();
    clearTimeout(cut);
    res.removeListener('drain', pump);
  };
  // Raw body until close: with both framing headers removed Node writes neither and ends the connection after it.
  res.removeHeader('content-length');
  res.removeHeader('transfer-encoding');
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'cache-control': 'no-store',
    connection: 'close',
    [PROBE_NODE_HEADER]: nodeId,
  });
  const cut = setTimeout(() => {
    finish();
    res.destroy();
  }, q.ms + PROBE_STREAM_GRACE_MS);
  res.once('close', finish);
  const t0 = performance.now();
  let sent = 0;
  function pump(): void {
    while (!done && sent < q.bytes && performance.now() - t0 < q.ms) {
      const n = Math.min(BLOCK.length, q.bytes - sent);
      sent += n;
      if (!res.write(n === BLOCK.length ? BLOCK : BLOCK.subarray(0, n))) {
        res.once('drain', pump);
        return;
      }
    }
    if (!done) res.end(() => res.destroy());
  }
  res.flushHeaders();
  pump();
}
