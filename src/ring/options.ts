/** Options of RingCommunicator.connect, their defaults and validation. */
import { ValidationError } from '../protocols/errors.js';
import type { RingHost } from './peer-links.js';
import type { DirectionsOption } from './directions.js';

export interface RingConnectOptions {
  /** This process's rank, 0 … hosts.length-1. */
  readonly rank: number;
  /**
   * exo's hosts-by-node for this rank (MLX hostfile semantics): one entry per rank; the own entry is
   * where to listen (usually `0.0.0.0:port`), the neighbours' entries are where to reach them, other
   * entries are ignored placeholders. `{ip, port}` objects or `"ip:port"` strings.
   */
  readonly hosts: readonly (RingHost | string)[];
  /** A collective fails with TORUS_RING_TIMEOUT when a peer it waits on sends nothing for this long. Default 30 000. */
  readonly timeoutMs?: number;
  /** Set-up deadline (dial retries included). Default 30 000. */
  readonly connectTimeoutMs?: number;
  /** First dial retry delay; doubles up to 1 s. Default 50. */
  readonly retryDelayMs?: number;
  /** TCP connections per neighbour and direction. Default 1 (extra sockets in one event loop gave nothing here). */
  readonly connections?: number;
  /**
   * Use both ring directions at once (half the data each way): true, false, or 'auto' (default) = both exactly when
   * every rank reaches its two neighbours through different local interfaces (directions.ts). Every rank must
   * pass the same value.
   */
  readonly bidirectional?: DirectionsOption;
  /** Smallest pipeline chunk in bytes. Default 256 KiB. Large all-reduces use segment/8 up to maxChunkBytes. */
  readonly chunkBytes?: number;
  /** Largest pipeline chunk in bytes (adaptive chunks: segment/8 within [chunkBytes, maxChunkBytes]). Default 2 MiB. */
  readonly maxChunkBytes?: number;
  /** At or below this many bytes all-reduce/all-gather/broadcast take the latency path. Default 32 KiB. */
  readonly smallMessageBytes?: number;
  /** A second lane is used only when each rank's share per lane is at least this. Default 16 KiB. */
  readonly minLaneBytes?: number;
  /** Distinguishes ring instances sharing ports; both ends must agree. Default 0. */
  readonly ringId?: number;
  /** Data-plane key (keys.dataKey): each ring socket proves it when it opens. Default null (open mode, no proof). */
  readonly key?: string | null;
  /** Reduction kernels: 'wasm' (SIMD, every dtype) or 'js'. Default 'wasm'. */
  readonly kernel?: 'wasm' | 'js';
}

export type ResolvedOptions = Required<Omit<RingConnectOptions, 'hosts' | 'bidirectional'>> & {
  readonly hosts: readonly RingHost[];
  /** What was asked for (true, false or 'auto'). */
  readonly directions: DirectionsOption;
  /** In effect: both directions or one ('auto' is decided at set-up, see directions.ts). */
  readonly bidirectional: boolean;
};

export function parseHost(entry: RingHost | string, index: number): RingHost {
  if (typeof entry === 'string') {
    const at = entry.lastIndexOf(':');
    const ip = at > 0 ? entry.slice(0, at) : '';
    const port = Number(entry.slice(at + 1));
    if (!ip || !Number.isInteger(port) || port < 0 || port > 65535)
      throw new ValidationError('config', `hosts[${index}]`, `expected "ip:port", got ${JSON.stringify(entry)}`);
    return { ip, port };
  }
  if (!entry || typeof entry.ip !== 'string' || !Number.isInteger(entry.port) || entry.port < 0 || entry.port > 65535) {
    throw new ValidationError('config', `hosts[${index}]`, 'expected {ip, port}');
  }
  return { ip: entry.ip, port: entry.port };
}

const positive = (value: number | undefined, fallback: number, name: string, min = 1): number => {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v < min) throw new ValidationError('config', name, `must be a number >= ${min}`);
  return v;
};

export function resolveOptions(options: RingConnectOptions): ResolvedOptions {
  if (!Array.isArray(options.hosts) || options.hosts.length === 0)
    throw new ValidationError('config', 'hosts', 'must list one entry per rank');
  const hosts = options.hosts.map(parseHost);
  if (!Number.isInteger(options.rank) || options.rank < 0 || options.rank >= hosts.length) {
    throw new ValidationError('config', 'rank', `must be an integer in 0…${hosts.length - 1}`);
  }
  const connections = positive(options.connections, 1, 'connections');
  if (!Number.isInteger(connections) || connections > 16)
    throw new ValidationError('config', 'connections', 'must be an integer 1…16');
  const directions = options.bidirectional ?? 'auto';
  if (directions !== true && directions !== false && directions !== 'auto')
    throw new ValidationError('config', 'bidirectional', "must be true, false or 'auto'");
  return {
    rank: options.rank,
    hosts,
    timeoutMs: positive(options.timeoutMs, 30_000, 'timeoutMs'),
    connectTimeoutMs: positive(options.connectTimeoutMs, 30_000, 'connectTimeoutMs'),
    retryDelayMs: positive(options.retryDelayMs, 50, 'retryDelayMs'),
    connections,
    directions,
    bidirectional: directions === true,
    chunkBytes: positive(options.chunkBytes, 256 * 1024, 'chunkBytes', 16),
    maxChunkBytes: positive(options.maxChunkBytes, 2 * 1024 * 1024, 'maxChunkBytes', 16),
    smallMessageBytes: positive(options.smallMessageBytes, 32 * 1024, 'smallMessageBytes', 0),
    minLaneBytes: positive(options.minLaneBytes, 16 * 1024, 'minLaneBytes'),
    ringId: options.ringId ?? 0,
    key: options.key ?? null,
    kernel: options.kernel ?? 'wasm',
  };
}
