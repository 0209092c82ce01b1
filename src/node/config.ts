/**
 * Node configuration: defaults, an optional JSON config file, then command-line flags (flags win).
 * Every value is validated where it enters; a bad flag or file is a ValidationError naming it, and nothing starts.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ValidationError } from '../protocols/errors.js';
import { isLogLevel, type LogLevel } from '../runtime/log.js';
import { DEFAULT_IDLE_COLLECTION_MINUTES } from '../runtime/idle-collection.js';
import { wholeNumber } from './config-values.js';
import type { SecretSource } from './credentials.js';
import {
  DEFAULT_MAX_INSTANCES,
  DEFAULT_MAX_RUNNERS,
  parseExecPolicy,
  type ExecPolicy,
} from '../protocols/exec-policy.js';
import { API_CONFIG_KEYS, API_FLAGS, API_USAGE, parseApiConfig, type ApiConfig } from './api-config.js';
import {
  parseRunnerFilesConfig,
  RUNNER_FILES_CONFIG_KEYS,
  RUNNER_FILES_FLAGS,
  RUNNER_FILES_USAGE,
  type RunnerFilesConfig,
} from './runner-files-config.js';

import { INTERFACE_TYPES, type InterfaceType } from '../protocols/interface-types.js';
import { DEFAULT_INSTANCE_PORTS, parsePortRange, type PortRange } from '../actors/placement-planner/ports.js';

export const DEFAULT_PORT = 52_515;

export interface NodeConfig extends ApiConfig, RunnerFilesConfig {
  readonly dataDir: string;
  readonly port: number;
  /** Address the API and cluster listeners bind to. */
  readonly host: string;
  readonly name: string | undefined;
  readonly cluster: string;
  /** The cluster secret given to this start (flag, file, env or config); undefined = the saved or a new one. */
  readonly secret: string | undefined;
  readonly secretSource: SecretSource | undefined;
  /** exo's trust-the-LAN mode: no credential, no API auth. Explicit and loud (docs/security.md). */
  readonly insecureOpen: boolean;
  /** An API bearer token set with `--api-token-file` (default: derived from the cluster secret). */
  readonly apiToken: string | undefined;
  readonly peers: readonly string[];
  readonly ifaceTypes: Readonly<Record<string, InterfaceType>>;
  readonly logLevel: LogLevel;
  /** Turn multicast discovery off (static peers only). */
  readonly mdns: boolean;
  /** Heartbeat silence after which a node is declared gone. */
  readonly failureTimeoutMs: number;
  /** How often each link's liveness is probed (a link that stops answering is down one interval later). */
  readonly probeIntervalMs: number;
  /** Each new link is measured once more this long after the last new one (0: never). */
  readonly confirmMeasureMs: number;
  // ---- runners: exec off by default, bounded runners and instances ----
  /** `exec` workloads this node runs: none (default), any (`--allow-exec`), or an allow-list of commands. */
  readonly allowExec: ExecPolicy;
  /** Runners this node holds at once (default 8); more are refused with a Failed status naming the quota. */
  readonly maxRunners: number;
  /** Live instances in the cluster this node accepts when it leads (default 64). */
  readonly maxInstances: number;
  /**
   * Saved cluster state: a damaged file is refused unless this is set; then the readable part is
   * kept, the rest moved aside, and the node catches up from the leader before it votes or leads.
   */
  readonly repairState: boolean;
  // ---- cluster-port limits ----
  /** Inbound cluster connections in their handshake at once, apart from members (default 64). */
  readonly maxPendingHandshakes: number;
  /** Device figures torus cannot measure from Node (a GPU, an Apple accelerator); they replace the measured ones. */
  readonly deviceGflops: number | undefined;
  readonly deviceMemBandwidthGBps: number | undefined;
  /** Where the planner draws instance ports from (`--instance-ports`), outside every default ephemeral range. */
  readonly instancePorts: PortRange;
  /** Memory this node offers to placements, bytes: caps what it advertises (`--memory-limit`); undefined: all. */
  readonly memoryLimitBytes: number | undefined;
  /** Each actor thread's V8 heap budget, MiB (`--actor-heap`); undefined: V8's default (`off`). */
  readonly actorHeapMb: number | undefined;
  /** A thread with no full collection for this many minutes is collected (`--idle-gc-minutes`); 0: never. */
  readonly idleGcMinutes: number;
}

/**
 * The default heap budget of each actor thread: 20x what an actor holds today (10-25 MiB), so reaching it means a
 * runaway thread, which is then restarted instead of taking the machine's memory. A limit under 2 GiB also lowers
 * how far V8 lets a large heap commit beyond its live objects (up to 4x at V8's default limit, which follows the
 * machine's memory).
 */
export const DEFAULT_ACTOR_HEAP_MB = 512;
/** `--idle-gc-minutes` at most: a week. */
const MAX_IDLE_GC_MINUTES = 10_080;
/**
 * With a budget, each actor's young generation is held to this much. V8's default lets the new space grow to tens
 * of MiB under a steady allocation rate and keeps it committed (on Node 26 up to 96 MiB per thread); an actor's
 * short-lived objects are small messages, and a worker churning 30-60 MiB live spends about the same CPU with a
 * 16 MiB young generation while committing less than half the heap.
 */
export const ACTOR_YOUNG_GENERATION_MB = 16;
/** Below this an actor would spend its time collecting, or fail to start. */
const MIN_ACTOR_HEAP_MB = 64;

export const NODE_FLAGS = {
  help: { type: 'boolean', short: 'h' },
  config: { type: 'string' },
  'data-dir': { type: 'string' },
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  name: { type: 'string' },
  cluster: { type: 'string' },
  secret: { type: 'string' },
  'secret-file': { type: 'string' },
  'insecure-open': { type: 'boolean' },
  'api-token-file': { type: 'string' },
  peers: { type: 'string' },
  'iface-type': { type: 'string', multiple: true },
  'log-level': { type: 'string' },
  'no-mdns': { type: 'boolean' },
  'failure-timeout-ms': { type: 'string' },
  'probe-interval-ms': { type: 'string' },
  'confirm-measure-ms': { type: 'string' },
  'allow-exec': { type: 'string' },
  'max-runners': { type: 'string' },
  'max-instances': { type: 'string' },
  'repair-state': { type: 'boolean' },
  'max-pending-handshakes': { type: 'string' },
  'device-gflops': { type: 'string' },
  'device-mem-bandwidth': { type: 'string' },
  'memory-limit': { type: 'string' },
  'instance-ports': { type: 'string' },
  'actor-heap': { type: 'string' },
  'idle-gc-minutes': { type: 'string' },
  ...API_FLAGS,
  ...RUNNER_FILES_FLAGS,
} as const;

export const NODE_USAGE = `Usage: node dist/main.js [start] [options]

Starts a torus node: discovers peers, measures links, joins the cluster's event log, serves the HTTP API
and dashboard, and runs the runners placed on this machine.

Options:
  --data-dir DIR          where the node id, logs and runner files live (default TORUS_DATA_DIR, else ~/.torus)
  --port N                API port (default ${DEFAULT_PORT}; 0 picks a free pair); the cluster listens on
                          N+1, and static peers are given by their API port
  --host ADDR             address to listen on (default 0.0.0.0)
  --name NAME             a readable name for this node (default: the host name)
  --cluster NAME          cluster name; nodes only join a cluster of the same name (default "torus")
  --secret-file FILE      the cluster secret (a join token); also TORUS_SECRET. Without one, the secret saved in
                          the data dir is used, or a new one is created and printed as a join command
  --secret S              the same on the command line (visible in ps: prefer --secret-file or TORUS_SECRET)
  --insecure-open         no credential at all: anyone who reaches the node controls it (exo's trust-the-LAN
                          mode; see docs/security.md)
  --api-token-file FILE   the API bearer token (default: derived from the cluster secret)
  --peers H:P,H:P         static peers, for networks where multicast does not work
  --iface-type NAME=TYPE  label an interface the OS cannot classify (repeatable);
                          TYPE is one of ${INTERFACE_TYPES.join(', ')}
  --no-mdns               do not use multicast discovery (static peers only)
  --failure-timeout-ms N  declare a silent node gone after N ms (default 4000)
  --probe-interval-ms N   probe each link's liveness every N ms (default 10000): a cut link is down that much later
  --confirm-measure-ms N  measure each new link again N ms after the last new one, keeping the better sample
                          (default 15000; 0: never)
  --allow-exec[=CMD,...]  run 'exec' workloads (arbitrary commands) placed here: all of them, or only the
                          commands listed (basename, or absolute path). Off by default (docs/security.md)
  --max-runners N         runners this node holds at once (default ${DEFAULT_MAX_RUNNERS})
  --max-instances N       live instances in the cluster, checked by the leader (default ${DEFAULT_MAX_INSTANCES})
  --repair-state          the saved cluster state is damaged (the node refused to start and said where): keep
                          its readable part, move the rest aside, and catch up from the cluster's leader
  --max-pending-handshakes N  cluster-port connections still proving the key, at most 8 per address
                          (default 64; members are counted apart)
  --device-gflops N       this node's compute in GFLOP/s, for an accelerator (default: measured on the CPU)
  --device-mem-bandwidth N  its memory bandwidth in GB/s (default: measured on the CPU at start)
  --memory-limit SIZE     offer at most this much memory to placements (e.g. 24GiB, 512MiB or bytes): caps the
                          available and total memory the node advertises (default: what the OS reports)
  --instance-ports MIN-MAX  where the ports of placed instances (ring, coordinator) are drawn from (default
                          ${DEFAULT_INSTANCE_PORTS.min}-${DEFAULT_INSTANCE_PORTS.max}, below every OS's default ephemeral range, so no outgoing
                          connection holds them); the leader's applies, so set the same on every node
  --actor-heap SIZE|off   the V8 heap budget of each actor thread (default ${DEFAULT_ACTOR_HEAP_MB}MiB; also
                          TORUS_ACTOR_HEAP): a thread past it is restarted; off: V8's default
  --idle-gc-minutes N     a thread (main or actor) with no full garbage collection for N minutes runs one, so
                          the garbage of a quiet thread goes back to the OS (default ${DEFAULT_IDLE_COLLECTION_MINUTES}; 0: never;
                          also TORUS_IDLE_GC_MINUTES)
${API_USAGE}
${RUNNER_FILES_USAGE}
  --log-level LEVEL       debug, info, warn (default), error, silent
  --config FILE           a JSON file with any of these options (camelCase keys); flags win
  -h, --help              show this help`;

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

function parsePort(value: unknown, where: 'flag' | 'config', path: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new ValidationError(where, path, `expected a port number 0-65535, got ${JSON.stringify(value)}`);
  return n;
}

function parsePeers(value: unknown, where: 'flag' | 'config', path: string): string[] {
  const list = Array.isArray(value)
    ? value
    : typeof value === 'string'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : null;
  if (!list) throw new ValidationError(where, path, 'expected host:port entries');
  return list.map((entry, i) => {
    const m = typeof entry === 'string' ? HOST_PORT.exec(entry) : null;
    if (!m) throw new ValidationError(where, `${path}[${i}]`, `expected host:port, got ${JSON.stringify(entry)}`);
    parsePort(m[2], where, `${path}[${i}]`);
    return entry as string;
  });
}

function parseIfaceTypes(value: unknown, where: 'flag' | 'config', path: string): Record<string, InterfaceType> {
  const out: Record<string, InterfaceType> = {};
  const entries: Array<[string, unknown]> = Array.isArray(value)
    ? value.map((item, i) => {
        const m = typeof item === 'string' ? /^([^=\s]+)=(\S+)$/.exec(item) : null;
        if (!m) throw new ValidationError(where, `${path}[${i}]`, `expected NAME=TYPE, got ${JSON.stringify(item)}`);
        return [m[1]!, m[2]];
      })
    : value && typeof value === 'object'
      ? Object.entries(value)
      : [];
  if (!Array.isArray(value) && (typeof value !== 'object' || value === null))
    throw new ValidationError(where, path, 'expected NAME=TYPE entries');
  for (const [name, type] of entries) {
    if (!(INTERFACE_TYPES as readonly unknown[]).includes(type)) {
      throw new ValidationError(
        where,
        `${path}.${name}`,
        `unknown interface type ${JSON.stringify(type)}; expected one of ${INTERFACE_TYPES.join(', ')}`,
      );
    }
    out[name] = type as InterfaceType;
  }
  return out;
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ValidationError('config', path, `cannot read: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ValidationError('config', path, `not valid JSON: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ValidationError('config', path, 'expected a JSON object');
  const known = [
    'dataDir',
    'port',
    'host',
    'name',
    'cluster',
    'secret',
    'secretFile',
    'insecureOpen',
    'apiTokenFile',
    'peers',
    'ifaceTypes',
    'logLevel',
    'mdns',
    'failureTimeoutMs',
    'probeIntervalMs',
    'confirmMeasureMs',
    'maxPendingHandshakes',
    ...API_CONFIG_KEYS,
    ...RUNNER_FILES_CONFIG_KEYS,
    'allowExec',
    'maxRunners',
    'maxInstances',
    'deviceGflops',
    'deviceMemBandwidth',
    'memoryLimit',
    'instancePorts',
    'actorHeap',
    'idleGcMinutes',
  ];
  for (const key of Object.keys(parsed)) {
    if (!known.includes(key)) throw new ValidationError('config', key, `unknown option; known: ${known.join(', ')}`);
  }
  return parsed as Record<string, unknown>;
}

const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kib|mib|gib|tib|kb|mb|gb|tb)?$/i;
const SIZE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
};

/** `24GiB`, `512MiB`, `8GB`, or bytes → bytes; at least 1 MiB (a smaller figure is a typo, not a node). */
export function parseMemorySize(value: unknown, where: 'flag' | 'config', path: string): number {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  const m = SIZE.exec(text);
  const bytes = m ? Math.round(Number(m[1]) * (SIZE_UNITS[(m[2] ?? 'b').toLowerCase()] ?? 1)) : Number.NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 2 ** 20)
    throw new ValidationError(where, path, 'expected a size of at least 1MiB, like 24GiB, 512MiB or bytes');
  return bytes;
}

/** `--actor-heap`: a size (whole MiB, at least MIN_ACTOR_HEAP_MB), or `off` (undefined: V8's default limit). */
function parseActorHeap(value: unknown, where: 'flag' | 'config', path: string): number | undefined {
  if (value === undefined) return DEFAULT_ACTOR_HEAP_MB;
  if (value === 'off' || value === false) return undefined;
  const why = `expected a size of at least ${MIN_ACTOR_HEAP_MB}MiB (like 512MiB or 1GiB) or off`;
  let bytes: number;
  try {
    bytes = parseMemorySize(value, where, path);
  } catch {
    throw new ValidationError(where, path, why);
  }
  const mb = Math.floor(bytes / 2 ** 20);
  if (mb < MIN_ACTOR_HEAP_MB || mb > 1 << 20) throw new ValidationError(where, path, why);
  return mb;
}

function nonEmpty(value: unknown, where: 'flag' | 'config', path: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 256)
    throw new ValidationError(where, path, 'expected a non-empty string');
  return value;
}

function readSecretFile(path: string, where: 'flag' | 'config', key: string, what = 'secret'): string {
  let secret: string;
  try {
    secret = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new ValidationError(where, key, `cannot read ${what} file ${path}: ${(error as Error).message}`);
  }
  if (!secret) throw new ValidationError(where, key, `${what} file ${path} is empty`);
  if (secret.length > 1024 || /\s/.test(secret))
    throw new ValidationError(
      where,
      key,
      `${what} file ${path} must hold one line without spaces (at most 1024 characters)`,
    );
  return secret;
}

/** The credential flags, in precedence order: --secret, --secret-file, TORUS_SECRET, config secret/secretFile. */
function pickSecret(
  values: Record<string, unknown>,
  file: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): { secret?: string; source?: SecretSource } {
  if (values.secret !== undefined) return { secret: nonEmpty(values.secret, 'flag', '--secret'), source: 'flag' };
  if (values['secret-file'] !== undefined)
    return { secret: readSecretFile(String(values['secret-file']), 'flag', '--secret-file'), source: 'file' };
  if (env.TORUS_SECRET !== undefined && env.TORUS_SECRET !== '')
    return { secret: nonEmpty(env.TORUS_SECRET, 'flag', 'TORUS_SECRET'), source: 'env' };
  if (file.secret !== undefined) return { secret: nonEmpty(file.secret, 'config', 'secret'), source: 'config' };
  if (file.secretFile !== undefined)
    return {
      secret: readSecretFile(nonEmpty(file.secretFile, 'config', 'secretFile'), 'config', 'secretFile'),
      source: 'file',
    };
  return {};
}

/** `--allow-exec` alone is the boolean form: parseArgs has no optional values, so it becomes `--allow-exec=*`. */
const ALLOW_ALL = '*';
function normalizeArgs(args: readonly string[]): string[] {
  return args.map((a) => (a === '--allow-exec' ? `--allow-exec=${ALLOW_ALL}` : a));
}

function execPolicyOf(value: unknown, where: 'flag' | 'config', path: string): ExecPolicy {
  if (value === undefined) return false;
  if (value === ALLOW_ALL && where === 'flag') return true;
  try {
    return parseExecPolicy(value);
  } catch (error) {
    throw new ValidationError(where, path, (error as Error).message);
  }
}

export interface ParsedNodeArgs {
  readonly help: boolean;
  readonly config: NodeConfig;
}

/** Parses `start` flags (after the subcommand). Throws ValidationError on any bad flag or config value. */
export function parseNodeArgs(args: readonly string[], env: NodeJS.ProcessEnv = process.env): ParsedNodeArgs {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: normalizeArgs(args), options: NODE_FLAGS, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new ValidationError('flag', '', (error as Error).message);
  }
  const file = typeof values.config === 'string' ? readConfigFile(values.config) : {};
  const pick = (flag: string, key: string): { value: unknown; where: 'flag' | 'config'; path: string } =>
    values[flag] !== undefined
      ? { value: values[flag], where: 'flag', path: `--${flag}` }
      : { value: file[key], where: 'config', path: key };

  const port = pick('port', 'port');
  const peers = pick('peers', 'peers');
  const iface = pick('iface-type', 'ifaceTypes');
  const level = pick('log-level', 'logLevel');
  const timeout = pick('failure-timeout-ms', 'failureTimeoutMs');
  const logLevel = level.value ?? env.TORUS_LOG_LEVEL ?? 'warn';
  if (!isLogLevel(logLevel))
    throw new ValidationError(
      level.where,
      level.path,
      `expected debug, info, warn, error or silent, got ${JSON.stringify(logLevel)}`,
    );
  const failureTimeoutMs = timeout.value === undefined ? 4_000 : Number(timeout.value);
  if (!Number.isFinite(failureTimeoutMs) || failureTimeoutMs < 500 || failureTimeoutMs > 600_000) {
    throw new ValidationError(timeout.where, timeout.path, 'expected milliseconds between 500 and 600000');
  }

  const millis = (flag: string, key: string, fallback: number, min: number): number => {
    const f = pick(flag, key);
    const x = f.value === undefined ? fallback : Number(f.value);
    if (!Number.isInteger(x) || x < min || x > 600_000)
      throw new ValidationError(f.where, f.path, `expected milliseconds between ${min} and 600000`);
    return x;
  };
  // Shorter than the defaults only where a test or a small LAN needs faster reactions; each probe is a round trip.
  const probeIntervalMs = millis('probe-interval-ms', 'probeIntervalMs', 10_000, 500);
  const confirmMeasureMs = millis('confirm-measure-ms', 'confirmMeasureMs', 15_000, 0);

  const pending = pick('max-pending-handshakes', 'maxPendingHandshakes');
  const maxPendingHandshakes = pending.value === undefined ? 64 : Number(pending.value);
  if (!Number.isInteger(maxPendingHandshakes) || maxPendingHandshakes < 1 || maxPendingHandshakes > 4096) {
    throw new ValidationError(pending.where, pending.path, 'expected an integer between 1 and 4096');
  }

  const { secret, source: secretSource } = pickSecret(values, file, env);
  if (file.insecureOpen !== undefined && typeof file.insecureOpen !== 'boolean')
    throw new ValidationError('config', 'insecureOpen', 'expected true or false');
  const insecureOpen = values['insecure-open'] === true || file.insecureOpen === true;
  if (insecureOpen && secret !== undefined) {
    throw new ValidationError(
      values['insecure-open'] === true ? 'flag' : 'config',
      values['insecure-open'] === true ? '--insecure-open' : 'insecureOpen',
      'cannot be combined with a cluster secret',
    );
  }
  const tokenFile = pick('api-token-file', 'apiTokenFile');
  const apiToken =
    tokenFile.value === undefined
      ? undefined
      : readSecretFile(
          nonEmpty(tokenFile.value, tokenFile.where, tokenFile.path),
          tokenFile.where,
          tokenFile.path,
          'API token',
        );
  if (apiToken !== undefined && apiToken.length < 16)
    throw new ValidationError(tokenFile.where, tokenFile.path, 'an API token needs at least 16 characters');
  if (insecureOpen && apiToken !== undefined)
    throw new ValidationError(tokenFile.where, tokenFile.path, 'cannot be combined with --insecure-open');

  const name = pick('name', 'name');
  const cluster = pick('cluster', 'cluster');
  const dataDir = pick('data-dir', 'dataDir');
  const host = pick('host', 'host');
  const mdnsOff = values['no-mdns'] === true || file.mdns === false;
  if (file.mdns !== undefined && typeof file.mdns !== 'boolean')
    throw new ValidationError('config', 'mdns', 'expected true or false');
  const exec = pick('allow-exec', 'allowExec');
  const maxRunners = pick('max-runners', 'maxRunners');
  const maxInstances = pick('max-instances', 'maxInstances');
  const figure = (flag: string, key: string, max: number): number | undefined => {
    const f = pick(flag, key);
    if (f.value === undefined) return undefined;
    const x = typeof f.value === 'number' || typeof f.value === 'string' ? Number(f.value) : Number.NaN;
    if (!Number.isFinite(x) || x <= 0 || x > max)
      throw new ValidationError(f.where, f.path, `expected a number above 0 and at most ${max}`);
    return x;
  };
  const deviceGflops = figure('device-gflops', 'deviceGflops', 1e9);
  const deviceMemBandwidthGBps = figure('device-mem-bandwidth', 'deviceMemBandwidth', 1e6);
  const memoryLimit = pick('memory-limit', 'memoryLimit');
  const memoryLimitBytes =
    memoryLimit.value === undefined
      ? undefined
      : parseMemorySize(memoryLimit.value, memoryLimit.where, memoryLimit.path);
  const ports = pick('instance-ports', 'instancePorts');
  const instancePorts =
    ports.value === undefined
      ? DEFAULT_INSTANCE_PORTS
      : typeof ports.value === 'string'
        ? parsePortRange(ports.value)
        : `expected "MIN-MAX" as a string, got ${JSON.stringify(ports.value)}`;
  if (typeof instancePorts === 'string') throw new ValidationError(ports.where, ports.path, instancePorts);
  const idleGc = pick('idle-gc-minutes', 'idleGcMinutes');
  const idleGcMinutes =
    idleGc.value === undefined && env.TORUS_IDLE_GC_MINUTES !== undefined && env.TORUS_IDLE_GC_MINUTES !== ''
      ? wholeNumber(
          { value: env.TORUS_IDLE_GC_MINUTES, where: 'flag', path: 'TORUS_IDLE_GC_MINUTES' },
          DEFAULT_IDLE_COLLECTION_MINUTES,
          0,
          MAX_IDLE_GC_MINUTES,
        )
      : wholeNumber(idleGc, DEFAULT_IDLE_COLLECTION_MINUTES, 0, MAX_IDLE_GC_MINUTES);
  const actorHeap = pick('actor-heap', 'actorHeap');
  const actorHeapMb =
    actorHeap.value === undefined && env.TORUS_ACTOR_HEAP !== undefined && env.TORUS_ACTOR_HEAP !== ''
      ? parseActorHeap(env.TORUS_ACTOR_HEAP, 'flag', 'TORUS_ACTOR_HEAP')
      : parseActorHeap(actorHeap.value, actorHeap.where, actorHeap.path);

  return {
    help: values.help === true,
    config: {
      dataDir:
        dataDir.value === undefined
          ? env.TORUS_DATA_DIR || join(homedir(), '.torus')
          : nonEmpty(dataDir.value, dataDir.where, dataDir.path),
      port: port.value === undefined ? DEFAULT_PORT : parsePort(port.value, port.where, port.path),
      host: host.value === undefined ? '0.0.0.0' : nonEmpty(host.value, host.where, host.path),
      name: name.value === undefined ? undefined : nonEmpty(name.value, name.where, name.path),
      cluster: cluster.value === undefined ? 'torus' : nonEmpty(cluster.value, cluster.where, cluster.path),
      secret,
      secretSource,
      insecureOpen,
      apiToken,
      peers: peers.value === undefined ? [] : parsePeers(peers.value, peers.where, peers.path),
      ifaceTypes: iface.value === undefined ? {} : parseIfaceTypes(iface.value, iface.where, iface.path),
      logLevel,
      mdns: !mdnsOff,
      failureTimeoutMs,
      probeIntervalMs,
      confirmMeasureMs,
      allowExec: execPolicyOf(exec.value, exec.where, exec.path),
      maxRunners: wholeNumber(maxRunners, DEFAULT_MAX_RUNNERS, 1, 4096),
      maxInstances: wholeNumber(maxInstances, DEFAULT_MAX_INSTANCES, 1, 100_000),
      repairState: values['repair-state'] === true,
      maxPendingHandshakes,
      deviceGflops,
      deviceMemBandwidthGBps,
      memoryLimitBytes,
      instancePorts,
      actorHeapMb,
      idleGcMinutes,
      ...parseApiConfig(pick),
      ...parseRunnerFilesConfig(pick),
    },
  };
}
