/**
 * The HTTP API's security and limit options: `--api-allowed-hosts`, the API's own TLS files, and the `--max-...`
 * bounds on what a stranger can make the API hold. Their entries of the option table (option-table.ts).
 */
import { DEFAULT_API_LIMITS } from '../api/limits.js';
import { ValidationError } from '../protocols/errors.js';
import { Type } from '../protocols/schema-kit.js';
import { type PickedValue, whole } from './config-values.js';
import { bounded, type OptionSpec, raw } from './option-spec.js';
import type { OptionValues } from './parse-options.js';

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

const d = DEFAULT_API_LIMITS;
const pem = (which: 'cert' | 'key'): OptionSpec<PickedValue> => ({
  flag: `tls-${which}`,
  key: which === 'cert' ? 'tlsCert' : 'tlsKey',
  arg: 'FILE',
  schema: Type.String(),
  expects: 'a file path',
  default: 'a self-signed one made on first start, saved in the data dir',
  help: `the API's TLS ${which === 'cert' ? 'certificate' : 'key'} (PEM), given with --tls-${which === 'cert' ? 'key' : 'cert'}; clients pin the certificate's SHA-256 fingerprint`,
  parse: raw,
  example: [`/etc/torus/api.${which}`, `/etc/torus/api.${which}`],
});

export const API_OPTIONS = {
  apiAllowedHosts: {
    flag: 'api-allowed-hosts',
    key: 'apiAllowedHosts',
    arg: 'H,H',
    schema: Type.Union([Type.String(), Type.Array(Type.String())]),
    expects: 'host names separated by commas',
    default: 'none',
    help: "host names the API answers to besides this machine's addresses, its host name and localhost (a Host header naming anything else is refused: DNS rebinding)",
    parse: hosts,
    example: ['torus.lan', ['torus.lan']],
  } satisfies OptionSpec<string[]>,
  tlsCert: pem('cert'),
  tlsKey: pem('key'),
  maxHttpConnections: bounded({
    flag: 'max-http-connections',
    key: 'maxHttpConnections',
    bounds: whole(1, 1_000_000),
    fallback: d.maxConnections,
    help: 'open API connections at once (docs/security.md)',
    example: ['100', 100],
  }),
  maxHttpConnectionsPerIp: bounded({
    flag: 'max-http-connections-per-ip',
    key: 'maxHttpConnectionsPerIp',
    bounds: whole(1, 1_000_000),
    fallback: d.maxConnectionsPerIp,
    help: 'open API connections from one address',
    example: ['10', 10],
  }),
  maxSseClients: bounded({
    flag: 'max-sse-clients',
    key: 'maxSseClients',
    bounds: whole(1, 100_000),
    fallback: d.maxSseClients,
    help: 'open /v1/events streams',
    example: ['10', 10],
  }),
  maxWriteRate: bounded({
    flag: 'max-write-rate',
    key: 'maxWriteRate',
    bounds: whole(1, 1_000_000),
    fallback: d.maxWriteRate,
    help: 'create / measure / bench requests per minute per client',
    example: ['10', 10],
  }),
} satisfies Record<string, OptionSpec>;

function pemFile(p: PickedValue): string | undefined {
  if (p.value === undefined) return undefined;
  if (typeof p.value !== 'string' || p.value === '') throw new ValidationError(p.where, p.path, 'expected a file path');
  return p.value;
}

export function apiConfigOf(v: OptionValues<typeof API_OPTIONS>): ApiConfig {
  const { tlsCert: cert, tlsKey: key } = v;
  if ((cert.value === undefined) !== (key.value === undefined)) {
    const missing = cert.value === undefined ? cert : key;
    throw new ValidationError(missing.where, missing.path, '--tls-cert and --tls-key go together');
  }
  return {
    tlsCert: pemFile(cert),
    tlsKey: pemFile(key),
    apiAllowedHosts: v.apiAllowedHosts,
    maxHttpConnections: v.maxHttpConnections,
    maxHttpConnectionsPerIp: v.maxHttpConnectionsPerIp,
    maxSseClients: v.maxSseClients,
    maxWriteRate: v.maxWriteRate,
  };
}
