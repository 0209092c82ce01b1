/**
 * Link measurement against a peer's probe routes: RTT (median of several request/response samples on one kept-alive
 * connection) and capacity (a short timed raw TCP stream from the peer, bounded in bytes and time, stream-probe.ts;
 * the best of a few). Run on change or on request, never continuously. `measureThroughput` (an HTTP upload to the
 * sink route) is the previous probe, kept for comparison: it is CPU-bound near 5 Gbit/s on a loaded machine.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { TorusError } from '../../../protocols/errors.js';
import {
  decodeSinkReport,
  MAX_PROBE_BYTES,
  MAX_PROBE_MS,
  PROBE_BUSY_BUDGET_MS,
  PROBE_FORCE_HEADER,
  PROBE_PATHS,
  type SinkReport,
} from '../../../protocols/probe.js';
import { httpGetJson } from './http-get.js';
import { proofHeaders, type ProbeSigner } from '../../../protocols/probe-proof.js';
import { median } from './rate.js';
import { measureStream, type StreamProbeOptions, type StreamReport } from './stream-probe.js';

export interface RttOptions {
  readonly samples?: number;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Signs each request with the data key (protocols/probe-proof.ts); none in open mode. */
  readonly signer?: ProbeSigner | null;
  /** How long to keep sampling while the peer answers busy (default 5 s); then every sample counts. */
  readonly busyBudgetMs?: number;
}

/** Pause after a busy sample: a capacity probe lasts ~0.3–2.3 s, so a few pauses see it end. */
const BUSY_PAUSE_MS = 150;

/**
 * The link's round trip without a capacity probe's queue in it: the median of `samples` request/response times
 * that the peer answered `"ok"`. A `"busy"` answer (a probe stream is crossing the peer's port: on a tbf-shaped
 * port its queue adds ~latency × rate worth of delay, 100+ ms at 10 Mbit/s) is set aside and sampled again after a
 * pause, until `busyBudgetMs`; if the peer stays busy that long, the least of all samples is the estimate (a queue
 * only ever adds). An older peer always answers `"ok"`.
 */
export async function measureRtt(
  ip: string,
  port: number,
  opts: RttOptions = {},
): Promise<{ rttMs: number; samples: number[]; busySamples: number }> {
  const n = Math.max(1, Math.min(opts.samples ?? 7, 100));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const get = (): Promise<unknown> =>
      httpGetJson(ip, port, PROBE_PATHS.echo, {
        timeoutMs: opts.timeoutMs ?? 1000,
        agent,
        headers: proofHeaders(opts.signer, 'GET', PROBE_PATHS.echo),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    await get(); // warm-up: connection set-up is not part of the round trip
    const samples: number[] = [];
    const busy: number[] = [];
    const budgetEnd = performance.now() + (opts.busyBudgetMs ?? 5000);
    while (samples.length < n) {
      const t0 = performance.now();
      const answer = await get();
      const ms = performance.now() - t0;
      if (answer !== 'busy') samples.push(ms);
      else if (performance.now() >= budgetEnd) {
        busy.push(ms);
        break;
      } else {
        busy.push(ms);
        await abortableDelay(BUSY_PAUSE_MS, opts.signal);
      }
    }
    const rttMs = samples.length > 0 ? median(samples) : Math.min(...busy);
    return { rttMs, samples, busySamples: busy.length };
  } finally {
    agent.destroy();
  }
}

export interface ThroughputOptions {
  /** Stop sending after this long (default 500 ms, at most MAX_PROBE_MS). */
  readonly durationMs?: number;
  /** Stop sending after this many bytes (default 256 MiB, at most MAX_PROBE_BYTES). */
  readonly maxBytes?: number;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Send even if the sink is busy with another probe (protocols/probe.ts). */
  readonly force?: boolean;
  readonly signer?: ProbeSigner | null;
}

const CHUNK = Buffer.alloc(256 * 1024, 0x5a);

/** Uploads to the peer's sink for a bounded time/size; resolves with the receiver's report (bps = bits/s). */
export function measureThroughput(ip: string, port: number, opts: ThroughputOptions = {}): Promise<SinkReport> {
  const durationMs = Math.min(opts.durationMs ?? 500, MAX_PROBE_MS);
  const maxBytes = Math.min(opts.maxBytes ?? 256 * 1024 * 1024, MAX_PROBE_BYTES);
  const timeoutMs = opts.timeoutMs ?? durationMs + 5000;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | undefined, report?: SinkReport): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        req.destroy();
        reject(error);
      } else resolve(report as SinkReport);
    };
    // Expect: 100-continue: a busy sink refuses before any byte is sent. Without it the refusal raced the upload
    // and the client often saw `write EPIPE` (the server closes after answering) instead of the 503.
    const headers: Record<string, string> = {
      'content-type': 'application/octet-stream',
      expect: '100-continue',
      ...proofHeaders(opts.signer, 'POST', PROBE_PATHS.sink),
    };
    if (opts.force) headers[PROBE_FORCE_HEADER] = '1';
    const req = http.request(
      { host: ip, port, path: PROBE_PATHS.sink, method: 'POST', agent: false, headers },
      (res) => {
        if (res.statusCode === 503) {
          res.resume();
          return finish(new TorusError('TORUS_PROBE_BUSY', `${ip}:${port} sink: busy with another probe`));
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode !== 200)
            return finish(new TorusError('TORUS_PROTOCOL_INVALID', `${ip}:${port} sink: HTTP ${res.statusCode}`));
          try {
            finish(undefined, decodeSinkReport(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
          } catch (error) {
            finish(error as Error);
          }
        });
      },
    );
    const timer = setTimeout(
      () => finish(new TorusError('TORUS_RING_TIMEOUT', `${ip}:${port} sink: no report within ${timeoutMs} ms`)),
      timeoutMs,
    );
    opts.signal?.addEventListener(
      'abort',
      () => finish(new TorusError('TORUS_CANCELLED', 'throughput probe cancelled')),
      { once: true },
    );
    req.on('error', (e) => finish(e));
    let sent = 0;
    let t0 = 0;
    const pump = (): void => {
      if (t0 === 0) t0 = performance.now();
      while (!settled && sent < maxBytes && performance.now() - t0 < durationMs) {
        sent += CHUNK.length;
        if (!req.write(CHUNK)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!settled) req.end();
    };
    // Send on 100 Continue; a server that never answers it gets the body after 1 s anyway (RFC 9110 §10.1.1).
    let started = false;
    const start = (): void => {
      if (started || settled) return;
      started = true;
      clearTimeout(continueTimer);
      pump();
    };
    const continueTimer = setTimeout(start, 1000);
    req.once('continue', start);
    req.once('close', () => clearTimeout(continueTimer));
    req.flushHeaders();
  });
}

/**
 * Capacity estimate: the best of a few short stream probes. Noise on a shared machine (a descheduled reader, a
 * competing flow) only ever lowers a transfer's rate, so the maximum is the better estimate of what the link can carry.
 */
export async function measureCapacity(ip: string, port: number, opts: CapacityOptions = {}): Promise<StreamReport> {
  let best: StreamReport | undefined;
  const budgetEnd = Date.now() + (opts.busyBudgetMs ?? PROBE_BUSY_BUDGET_MS);
  for (let i = 0; i < Math.max(1, Math.min(opts.repeats ?? 2, 5)); i++) {
    const r = await exclusiveTransfer(ip, port, opts, budgetEnd);
    if (!best || r.bps > best.bps) best = r;
  }
  return best as StreamReport;
}

export interface CapacityOptions extends StreamProbeOptions {
  readonly repeats?: number;
  /** How long to keep retrying a busy sink before sending with the force header (default PROBE_BUSY_BUDGET_MS). */
  readonly busyBudgetMs?: number;
  /** Called with true before each transfer attempt and false after it (the profiler announces its own sends). */
  readonly onTransfer?: (active: boolean) => void;
}

/** One transfer that waits its turn: a busy sink is retried after a random 100–600 ms until the budget ends. */
async function exclusiveTransfer(
  ip: string,
  port: number,
  opts: CapacityOptions,
  budgetEnd: number,
): Promise<StreamReport> {
  for (;;) {
    const force = opts.force === true || Date.now() >= budgetEnd;
    opts.onTransfer?.(true);
    try {
      return await measureStream(ip, port, { ...opts, force });
    } catch (error) {
      if (!(error instanceof TorusError && error.code === 'TORUS_PROBE_BUSY') || force) throw error;
    } finally {
      opts.onTransfer?.(false);
    }
    await abortableDelay(100 + Math.random() * 500, opts.signal);
  }
}

function abortableDelay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new TorusError('TORUS_CANCELLED', 'throughput probe cancelled'));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new TorusError('TORUS_CANCELLED', 'throughput probe cancelled'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface LinkMetrics {
  readonly rttMs: number;
  readonly bandwidthBps: number;
  readonly measuredAt: number;
}

export async function measureLink(
  ip: string,
  port: number,
  opts: { rtt?: RttOptions; throughput?: CapacityOptions; now?: () => number } = {},
): Promise<LinkMetrics> {
  const { rttMs } = await measureRtt(ip, port, opts.rtt);
  const report = await measureCapacity(ip, port, opts.throughput);
  return { rttMs, bandwidthBps: report.bps, measuredAt: (opts.now ?? Date.now)() };
}
