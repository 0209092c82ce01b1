/**
 * The HTTP API's security and limit options: `--api-allowed-hosts` and the `--max-...` bounds on what a
 * stranger can make the API hold. Kept apart from config.ts so each area's options stay in one block.
 */
import { ValidationError } from '../protocols/errors.js';
import { DEFAULT_API_LIMITS } from '../api/limits.js';
import { type Pick, type PickedValue, wholeNumber } from './config-values.js';

export interface ApiConfig {
  /** Host names the Host header may carry besides the node's addresses and localhost (DNS-rebinding check). */
  readonly apiAllowedHosts: readonly string[];
  readonly maxHttpConnections: number;
  readonly maxHttpConnectionsPerIp: number;
  readonly maxSseClients: number;
  /** Create / measure / bench requests per minute per client address. */
  readonly maxWriteRate: number;
  /** An organisation's own certificate and key for the API (PEM files); default: the node's self-signed one. */
  readonly tlsCert: string | undefined;
  readonly tlsKey: string | undefined;
}

export const API_FLAGS = {
  'api-allowed-hosts': { type: 'string' },
  'max-http-connections': { type: 'string' },
  'max-http-connections-per-ip': { type: 'string' },
  'max-sse-clients': { type: 'string' },
  'max-write-rate': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
} as const;

export const API_CONFIG_KEYS = [
  'apiAllowedHosts',
  'maxHttpConnections',
  'maxHttpConnectionsPerIp',
  'maxSseClients',
  'maxWriteRate',
  'tlsCert',
  'tlsKey',
];

export const API_USAGE = `  --api-allowed-hosts H,H  host names the API answers to besides this machine's addresses, its host name and
                          localhost (a Host header naming anything else is refused: DNS rebinding)
  --max-http-connections N         open API connections at once (default ${DEFAULT_API_LIMITS.maxConnections})
  --max-http-connections-per-ip N  open API connections from one address (default ${DEFAULT_API_LIMITS.maxConnectionsPerIp})
  --max-sse-clients N     open /v1/events streams (default ${DEFAULT_API_LIMITS.maxSseClients})
  --max-write-rate N      create / measure / bench requests per minute per client (default ${DEFAULT_API_LIMITS.maxWriteRate})
  --tls-cert FILE --tls-key FILE  the API's TLS certificate and key (PEM; default: a self-signed one the node
                          makes on first start, saved in the data dir; clients pin its SHA-256 fingerprint)`;

/** A whole number from 1 to `max`. */
const count = (p: PickedValue, fallback: number, max: number): number => wholeNumber(p, fallback, 1, max);

function hosts(p: PickedValue): string[] {
  if (p.value === undefined) return [];
  const list = Array.isArray(p.value)
    ? p.value
    : typeof p.value === 'string'
      ? p.value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : null;
  if (!list) throw new ValidationError(p.where, p.path, 'expected host names separated by commas');
  return list.map((h, i) => {
    if (typeof h !== 'string' || !/^(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*|[A-Za-z0-9.-]{1,253})$/.test(h)) {
      throw new ValidationError(
        p.where,
        `${p.path}[${i}]`,
        `expected a host name or address (no port), got ${JSON.stringify(h)}`,
      );
    }
    return h.toLowerCase();
  });
}

function pemFile(p: PickedValue): string | undefined {
  if (p.value === undefined) return undefined;
  if (typeof p.value !== 'string' || p.value === '') throw new ValidationError(p.where, p.path, 'expected a file path');
  return p.value;
}

export function parseApiConfig(pick: Pick): ApiConfig {
  const d = DEFAULT_API_LIMITS;
  const cert = pick('tls-cert', 'tlsCert');
  const key = pick('tls-key', 'tlsKey');
  if ((cert.value === undefined) !== (key.value === undefined)) {
    const missing = cert.value === undefined ? cert : key;
    throw new ValidationError(missing.where, missing.path, '--tls-cert and --tls-key go together');
  }
  return {
    tlsCert: pemFile(cert),
    tlsKey: pemFile(key),
    apiAllowedHosts: hosts(pick('api-allowed-hosts', 'apiAllowedHosts')),
    maxHttpConnections: count(pick('max-http-connections', 'maxHttpConnections'), d.maxConnections, 1_000_000),
    maxHttpConnectionsPerIp: count(
      pick('max-http-connections-per-ip', 'maxHttpConnectionsPerIp'),
      d.maxConnectionsPerIp,
      1_000_000,
    ),
    maxSseClients: count(pick('max-sse-clients', 'maxSseClients'), d.maxSseClients, 100_000),
    maxWriteRate: count(pick('max-write-rate', 'maxWriteRate'), d.maxWriteRate, 1_000_000),
  };
}
