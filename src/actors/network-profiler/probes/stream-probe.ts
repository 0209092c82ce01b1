/**
 * Client side of the capacity probe: opens `streams` TCP connections to a peer's `GET /v1/probe/stream`
 * (stream-source.ts), reads the raw zeros into one reusable buffer per connection (net's `onread`: no allocation
 * and few syscalls per megabyte, about half the CPU of 'data' events) and times the arrivals of all connections
 * together. The rate skips the first 30 % of the transfer (TCP slow start and the tbf bucket's burst, rate.ts).
 *
 * Direction: the peer sends, this node receives, so the expensive side (reading) runs in the prober's own thread
 * and the peer's main thread only writes. The link is measured sink → source; every node measures its own links,
 * so both directions of a pair are measured, each by its receiver.
 *
 * A hostile or broken server cannot hold the prober: the head is bounded (MAX_PROBE_HEAD_BYTES) and strictly
 * parsed, the answering node must be the expected one, and bytes and time are bounded on this side too. More
 * bytes than asked for is a refusal. Time is not: on a slow link the server's writes of its `ms` sit in its
 * socket buffers and the link's queue (1 MiB blocks and a kernel send buffer of a few MiB: seconds at 1–5 Mbit/s)
 * and keep arriving well after the server stopped writing. So the prober ends the transfer itself
 * PROBE_STREAM_GRACE_MS after its time bound and rates what arrived, which was the link's pace all along.
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { TorusError } from '../../../protocols/errors.js';
import {
  MAX_PROBE_BYTES,
  MAX_PROBE_HEAD_BYTES,
  MAX_PROBE_MS,
  MAX_PROBE_STREAMS,
  PROBE_FORCE_HEADER,
  PROBE_NODE_HEADER,
  PROBE_PATHS,
  PROBE_STREAM_GRACE_MS,
} from '../../../protocols/probe.js';
import { steadyRate, type Sample } from './rate.js';
import { proofHeaders, type ProbeSigner } from '../../../protocols/probe-proof.js';

export interface StreamProbeOptions {
  /** Length of the transfer (default 300 ms, at most MAX_PROBE_MS). */
  readonly durationMs?: number;
  /**
   * Byte bound of the whole transfer over all connections (default and at most MAX_PROBE_BYTES, 1 GiB). The time
   * bound ends it first on any link below ~25 Gbit/s; a smaller byte bound would cut fast links' probes short.
   */
  readonly maxBytes?: number;
  /** Parallel connections (default 1, at most MAX_PROBE_STREAMS). */
  readonly streams?: number;
  /** The node that must answer (its id is in the response head); a different one is an error. */
  readonly expectNodeId?: string;
  /** Measure even if the peer is busy with another probe. */
  readonly force?: boolean;
  /** Overall bound (default durationMs + 5 s). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Signs each request with the data key (protocols/probe-proof.ts); none in open mode. */
  readonly signer?: ProbeSigner | null;
}

export interface StreamReport {
  readonly bytes: number;
  readonly seconds: number;
  readonly steadyBytes: number;
  readonly steadySeconds: number;
  /** bits per second over the steady part */
  readonly bps: number;
  readonly streams: number;
  readonly method: 'stream';
}

/** Parses an HTTP/1.x response head (without the blank line): status and lower-cased headers; throws on garbage. */
export function parseResponseHead(text: string): { status: number; headers: Record<string, string> } {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})(?: [^\r\n]*)?$/.exec(lines[0] ?? '');
  if (!m)
    throw new TorusError(
      'TORUS_PROTOCOL_INVALID',
      `stream probe: bad status line ${JSON.stringify((lines[0] ?? '').slice(0, 60))}`,
    );
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) throw new TorusError('TORUS_PROTOCOL_INVALID', 'stream probe: bad header line');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(m[1]), headers };
}

const CRLF2 = Buffer.from('\r\n\r\n');

export function measureStream(ip: string, port: number, opts: StreamProbeOptions = {}): Promise<StreamReport> {
  const durationMs = Math.max(1, Math.min(opts.durationMs ?? 300, MAX_PROBE_MS));
  const maxBytes = Math.max(1, Math.min(opts.maxBytes ?? MAX_PROBE_BYTES, MAX_PROBE_BYTES));
  const streams = Math.max(1, Math.min(Math.floor(opts.streams ?? 1), MAX_PROBE_STREAMS));
  const timeoutMs = opts.timeoutMs ?? durationMs + PROBE_STREAM_GRACE_MS + 3000;
  /** After the first byte: the transfer ends here whatever the server still sends. */
  const timeBoundMs = durationMs + PROBE_STREAM_GRACE_MS;
  const session = randomBytes(9).toString('base64url');
  const perStream = Math.ceil(maxBytes / streams);
  const query = `ms=${durationMs}&bytes=${perStream}&streams=${streams}&session=${session}`;
  const host = ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
  // One proof per connection: a proof is single-use.
  const request = (): string => {
    const proof = Object.entries(proofHeaders(opts.signer, 'GET', `${PROBE_PATHS.stream}?${query}`))
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    return `GET ${PROBE_PATHS.stream}?${query} HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n${opts.force ? `${PROBE_FORCE_HEADER}: 1\r\n` : ''}${proof}\r\n`;
  };

  return new Promise((resolve, reject) => {
    const sockets: net.Socket[] = [];
    const samples: Sample[] = [];
    let t0 = 0;
    let total = 0;
    let ended = 0;
    let settled = false;
    let cut: NodeJS.Timeout | undefined;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(cut);
      opts.signal?.removeEventListener('abort', onAbort);
      for (const s of sockets) s.destroy();
      if (error) return reject(error);
      const r = steadyRate(samples);
      resolve({ ...r, streams, method: 'stream' });
    };
    const onAbort = (): void => finish(new TorusError('TORUS_CANCELLED', 'stream probe cancelled'));
    const timer = setTimeout(
      () => finish(new TorusError('TORUS_RING_TIMEOUT', `${ip}:${port} stream probe: not done within ${timeoutMs} ms`)),
      timeoutMs,
    );
    if (opts.signal?.aborted) return onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    const count = (n: number): void => {
      if (n <= 0 || settled) return;
      const now = performance.now();
      if (total === 0) {
        t0 = now;
        cut = setTimeout(() => finish(), timeBoundMs);
      }
      total += n;
      const t = now - t0;
      // At most one sample per 0.5 ms: enough resolution, bounded memory at any rate.
      const prev = samples[samples.length - 1];
      if (prev && t - prev[0] < 0.5) samples[samples.length - 1] = [prev[0], total];
      else samples.push([t, total]);
      if (total > maxBytes + streams * (1 << 20))
        finish(
          new TorusError(
            'TORUS_PROTOCOL_INVALID',
            `${ip}:${port} stream probe: the server sent more bytes than it was asked for`,
          ),
        );
      // The time bound is the prober's own: past it the arrivals so far are the measurement (see the header).
      else if (t > timeBoundMs) finish();
    };

    for (let i = 0; i < streams; i++) {
      let head: Buffer | undefined = Buffer.alloc(0); // until the response head is complete
      const onread = (n: number, buf: Buffer): boolean => {
        if (settled) return false;
        if (!head) {
          count(n);
          return true;
        }
        head = Buffer.concat([head, buf.subarray(0, n)]);
        const end = head.indexOf(CRLF2);
        if (end < 0) {
          if (head.length > MAX_PROBE_HEAD_BYTES)
            finish(new TorusError('TORUS_PROTOCOL_INVALID', `${ip}:${port} stream probe: response head too large`));
          return true;
        }
        try {
          const { status, headers } = parseResponseHead(head.subarray(0, end).toString('latin1'));
          if (status === 503) throw new TorusError('TORUS_PROBE_BUSY', `${ip}:${port} stream: busy with another probe`);
          if (status !== 200)
            throw new TorusError('TORUS_PROTOCOL_INVALID', `${ip}:${port} stream probe: HTTP ${status}`);
          const node = headers[PROBE_NODE_HEADER];
          if (opts.expectNodeId !== undefined && node !== opts.expectNodeId) {
            throw new TorusError(
              'TORUS_PROTOCOL_INVALID',
              `${ip}:${port} stream probe: answered by ${JSON.stringify(node ?? null)}, expected ${opts.expectNodeId}`,
            );
          }
        } catch (error) {
          finish(error as Error);
          return false;
        }
        const rest = head.length - end - CRLF2.length;
        head = undefined;
        count(rest);
        return true;
      };
      const socket = net.connect(
        { host: ip, port, noDelay: true, onread: { buffer: Buffer.allocUnsafe(1 << 20), callback: onread } },
        () => socket.write(request()),
      );
      sockets.push(socket);
      socket.on('error', (e) => finish(e));
      socket.on('end', () => {
        if (head)
          return finish(
            new TorusError('TORUS_PROTOCOL_INVALID', `${ip}:${port} stream probe: connection closed before a response`),
          );
        if (++ended === streams)
          finish(
            total > 0
              ? undefined
              : new TorusError('TORUS_PROTOCOL_INVALID', `${ip}:${port} stream probe: no bytes received`),
          );
      });
    }
  });
}
