/**
 * Streamed reachability (docs/profiler.md): probe every address of every peer at once and yield each verified
 * (address, nodeId) the moment it completes. One slow or black-holed address delays nothing else; an address
 * that answers with a different node id is rejected, never reported as a link to the expected peer.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { asTorusError } from '../../../protocols/errors.js';
import type { InterfaceType } from '../../../protocols/events.js';
import { decodeNodeIdResponse, PROBE_PATHS } from '../../../protocols/probe.js';
import { httpGetJson } from './http-get.js';

export interface PeerAddress {
  readonly ip: string;
  /** The type of the peer's interface holding this address (from its profile), carried into LinkUp. */
  readonly type?: InterfaceType;
  /** Port override for this address (default: the peer's port). */
  readonly port?: number;
}

export interface PeerTarget {
  readonly nodeId: string;
  /** The peer's incarnation when known: a restarted peer (same id, next incarnation) must be re-verified. */
  readonly incarnation?: number;
  readonly port: number;
  readonly addresses: readonly (string | PeerAddress)[];
}

export interface ReachOptions {
  /** Attempts per address (bounded; default 3). */
  readonly attempts?: number;
  /** Per-attempt timeout (default 1000 ms). */
  readonly timeoutMs?: number;
  /** Pause between attempts (default 100 ms). */
  readonly retryDelayMs?: number;
  /** Also yield failures (`ok: false`): the profiler needs them to take links down. */
  readonly includeFailures?: boolean;
  readonly signal?: AbortSignal;
}

export interface ReachVerified {
  readonly ok: true;
  readonly address: string;
  readonly port: number;
  readonly nodeId: string;
  readonly type: InterfaceType;
  readonly attempts: number;
  /** From the start of the whole round to this result. */
  readonly elapsedMs: number;
}

export interface ReachFailed {
  readonly ok: false;
  readonly address: string;
  readonly port: number;
  readonly expectedNodeId: string;
  readonly type: InterfaceType;
  /** 'mismatch' when another node answered (then `answeredBy` says who), else 'unreachable'. */
  readonly reason: 'mismatch' | 'unreachable' | 'invalid';
  readonly answeredBy?: string;
  readonly error?: string;
  readonly attempts: number;
  readonly elapsedMs: number;
}

export type ReachResult = ReachVerified | ReachFailed;

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

async function probeOne(
  peer: PeerTarget,
  a: PeerAddress,
  opts: Required<Omit<ReachOptions, 'signal' | 'includeFailures'>> & { signal: AbortSignal },
  t0: number,
): Promise<ReachResult> {
  const port = a.port ?? peer.port;
  const type = a.type ?? 'unknown';
  let lastError = '';
  let invalid = false;
  for (let attempt = 1; attempt <= opts.attempts; attempt++) {
    try {
      const answered = decodeNodeIdResponse(
        await httpGetJson(a.ip, port, PROBE_PATHS.nodeId, {
          timeoutMs: opts.timeoutMs,
          signal: opts.signal,
          maxBytes: 1024,
        }),
      );
      const elapsedMs = performance.now() - t0;
      if (answered === peer.nodeId)
        return { ok: true, address: a.ip, port, nodeId: answered, type, attempts: attempt, elapsedMs };
      // A definite answer from someone else (a loopback, a VPN address, a reused IP): no retry.
      return {
        ok: false,
        address: a.ip,
        port,
        expectedNodeId: peer.nodeId,
        type,
        reason: 'mismatch',
        answeredBy: answered,
        attempts: attempt,
        elapsedMs,
      };
    } catch (error) {
      const e = asTorusError(error);
      lastError = e.message;
      invalid = e.code === 'TORUS_PROTOCOL_INVALID' || e.code === 'TORUS_API_VALIDATION';
      if (opts.signal.aborted) break;
      if (attempt < opts.attempts) await sleep(opts.retryDelayMs, opts.signal);
    }
  }
  return {
    ok: false,
    address: a.ip,
    port,
    expectedNodeId: peer.nodeId,
    type,
    reason: invalid ? 'invalid' : 'unreachable',
    error: lastError,
    attempts: opts.attempts,
    elapsedMs: performance.now() - t0,
  };
}

/**
 * Yields results in completion order. Breaking out of the loop (or aborting `signal`) cancels every probe
 * still in flight.
 */
export async function* probeReachability(
  peers: readonly PeerTarget[],
  options: ReachOptions = {},
): AsyncGenerator<ReachResult, void, undefined> {
  const controller = new AbortController();
  // Every in-flight probe listens on this one signal: many peers × addresses is expected, not a leak.
  setMaxListeners(0, controller.signal);
  const onAbort = (): void => controller.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const opts = {
    attempts: Math.max(1, Math.min(options.attempts ?? 3, 10)),
    timeoutMs: options.timeoutMs ?? 1000,
    retryDelayMs: options.retryDelayMs ?? 100,
    signal: controller.signal,
  };
  const t0 = performance.now();
  const queue: ReachResult[] = [];
  let wake: (() => void) | undefined;
  let pending = 0;
  const seen = new Set<string>();
  for (const peer of peers) {
    for (const raw of peer.addresses) {
      const a: PeerAddress = typeof raw === 'string' ? { ip: raw } : raw;
      const key = `${peer.nodeId}|${a.ip}|${a.port ?? peer.port}`;
      if (seen.has(key)) continue;
      seen.add(key);
      pending++;
      void probeOne(peer, a, opts, t0).then((r) => {
        pending--;
        queue.push(r);
        wake?.();
      });
    }
  }
  try {
    while (pending > 0 || queue.length > 0) {
      const next = queue.shift();
      if (next) {
        if (next.ok || options.includeFailures) yield next;
        continue;
      }
      if (controller.signal.aborted) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    controller.abort();
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** The one-shot alternative (what exo did): wait for every probe, then return all verified results. */
export async function probeAll(peers: readonly PeerTarget[], options: ReachOptions = {}): Promise<ReachVerified[]> {
  const out: ReachVerified[] = [];
  for await (const r of probeReachability(peers, { ...options, includeFailures: false })) if (r.ok) out.push(r);
  return out;
}
