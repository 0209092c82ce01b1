/**
 * MLX ring hostfile format and the runner environment contract.
 *
 * Hostfile (what `TORUS_HOSTFILE` / `MLX_HOSTFILE` point at): what `mlx.launch` writes for MLX's ring backend, a
 * JSON array with one entry per rank in rank order, each entry an array of `"ip:port"` strings (one here: the
 * planned address) — `[["0.0.0.0:5000"],["10.77.0.2:5000"]]`. A rank's own entry is `0.0.0.0:port` (listen on all
 * addresses), its two ring neighbours are the planned addresses, every other rank is the placeholder
 * `198.51.100.1:0` (RFC 5737 TEST-NET-2: a rank only ever talks to its neighbours).
 */
import { ValidationError } from './errors.js';
import { compileWire, Type, type Shape } from './schema-kit.js';

/** Where a rank's ring neighbours that are not its neighbours point (RFC 5737 TEST-NET-2: never reached). */
export const PLACEHOLDER_IP = '198.51.100.1';
/** A rank's own hostfile entry: listen on every address. */
export const LISTEN_ALL_IP = '0.0.0.0';
export const PLACEHOLDER_HOST = `${PLACEHOLDER_IP}:0`;

/** The variables every `exec` runner gets (see docs/runners.md). Values are strings, as in any environment. */
export const RUNNER_ENV_VARS = [
  'TORUS_RANK',
  'TORUS_WORLD_SIZE',
  'TORUS_HOSTFILE',
  'TORUS_INSTANCE_ID',
  'TORUS_NODE_ID',
  'TORUS_LAYER_START',
  'TORUS_LAYER_END',
  'MLX_RANK',
  'MLX_HOSTFILE',
  'MLX_JACCL_COORDINATOR',
  'MASTER_ADDR',
  'MASTER_PORT',
  'RANK',
  'WORLD_SIZE',
  // plus MLX_IBV_DEVICES (JSON devices matrix) when the plan is jaccl
] as const;
export type RunnerEnvVar = (typeof RUNNER_ENV_VARS)[number];
export type RunnerEnv = Readonly<Record<RunnerEnvVar, string>> & Readonly<Record<string, string>>;

/** One rank's address, parsed from its `"ip:port"` text (parseHostPort). */
export const HostPort = Type.Object(
  { ip: Type.String({ maxLength: 45 }), port: Type.Integer({ minimum: 0, maximum: 65535 }) },
  { additionalProperties: false },
);
export type HostPort = Shape<typeof HostPort>;

/**
 * The file's JSON: one entry per rank, mlx.launch's array of `"ip:port"` (its first address is the one used here)
 * or a bare string. The strings are a text format, read by parseHostPort.
 */
export const HostfileSchema = Type.Array(
  Type.Union(
    [Type.String({ maxLength: 64 }), Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 64 })],
    { description: '["ip:port", ...] or "ip:port"' },
  ),
  { minItems: 1, maxItems: 65536, description: 'one entry per rank' },
);
const hostfileCodec = compileWire(HostfileSchema, 'config', 'hostfile');

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9a-fA-F:.]{2,45}$/;

/** Parses `ip:port` (IPv6 as `[addr]:port` or the bare last-colon form MLX writes). Throws ValidationError. */
export function parseHostPort(text: string, path = 'host'): HostPort {
  const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text);
  const m = bracketed ?? /^(.+):(\d{1,5})$/.exec(text);
  if (!m || m[1] === undefined || m[2] === undefined)
    throw new ValidationError('config', path, `expected "ip:port", got ${JSON.stringify(text)}`);
  const ip = m[1];
  const port = Number(m[2]);
  if (!IPV4.test(ip) && !(ip.includes(':') && IPV6.test(ip)))
    throw new ValidationError('config', path, `bad IP address ${JSON.stringify(ip)}`);
  if (port > 65535) throw new ValidationError('config', path, `port ${port} out of range`);
  return { ip, port };
}

export function formatHostPort(host: HostPort): string {
  return host.ip.includes(':') ? `[${host.ip}]:${host.port}` : `${host.ip}:${host.port}`;
}

/** The file body, mlx.launch's shape: `[["0.0.0.0:5000"], ["10.77.0.2:5000"], ...]` plus a newline. */
export function encodeHostfile(hosts: readonly HostPort[]): string {
  return `${JSON.stringify(hosts.map((h) => [formatHostPort(h)]))}\n`;
}

/** Strict parse of a hostfile's text (or already-parsed JSON). */
export function decodeHostfile(input: unknown): HostPort[] {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw new ValidationError('config', 'hostfile', 'not JSON');
    }
  }
  return hostfileCodec
    .decode(value)
    .map((entry, i) => parseHostPort(typeof entry === 'string' ? entry : entry[0]!, `hostfile[${i}]`));
}

/** Ring neighbours of `rank` in a world of `worldSize` (left = rank−1, right = rank+1, modulo). */
export function ringNeighbours(rank: number, worldSize: number): { left: number; right: number } {
  return { left: (rank - 1 + worldSize) % worldSize, right: (rank + 1) % worldSize };
}
