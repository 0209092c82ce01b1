/**
 * The node's options, each written once: flag, config-file key, environment variable, type, default, bounds and
 * help. parse-options.ts reads flags, file and environment from it, usage.ts writes `--help`, config-file.ts
 * checks the config file with the schema built from it, and the README's flag table is checked against it.
 * The API's and the runner files' options are kept in their own blocks (api-config.ts, runner-files-config.ts).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_INSTANCE_PORTS, parsePortRange } from '../actors/placement-planner/search/ports.js';
import { ValidationError } from '../protocols/errors.js';
import { DEFAULT_MAX_INSTANCES, DEFAULT_MAX_RUNNERS } from '../protocols/exec-policy.js';
import { INTERFACE_TYPES } from '../protocols/interface-types.js';
import { Type } from '../protocols/schema-kit.js';
import { DEFAULT_IDLE_COLLECTION_MINUTES } from '../runtime/idle-collection.js';
import { isLogLevel, type LogLevel } from '../runtime/log.js';
import { API_OPTIONS } from './api-config.js';
import {
  DEFAULT_ACTOR_HEAP_MB,
  execPolicyOf,
  MIN_ACTOR_HEAP_MB,
  parseActorHeap,
  parseIfaceTypes,
  parseMemorySize,
  parsePeers,
} from './config-parsers.js';
import { whole } from './config-values.js';
import { bounded, flag, nonEmpty, type OptionSpec, raw, text } from './option-spec.js';
import { RUNNER_FILES_OPTIONS } from './runner-files-config.js';

export const DEFAULT_PORT = 52_515;
/** `--idle-gc-minutes` at most: a week. */
const MAX_IDLE_GC_MINUTES = 10_080;
/** A millisecond option from `min` up to ten minutes. */
const millis = (min: number, integer = true) => ({
  ...whole(min, 600_000, `milliseconds between ${min} and 600000`),
  integer,
});
const figure = (max: number) => ({
  min: 0,
  max,
  integer: false,
  exclusiveMin: true,
  text: `a number above 0 and at most ${max}`,
});

const CORE_OPTIONS = {
  dataDir: {
    ...text({
      flag: 'data-dir',
      key: 'dataDir',
      env: 'TORUS_DATA_DIR',
      arg: 'DIR',
      fallback: undefined,
      default: '~/.torus',
      help: 'where the node id (the same after a restart), secret, API token, logs and runner files live',
      example: ['/var/lib/torus', '/var/lib/torus'],
    }),
    parse: (p) => (p.value === undefined ? join(homedir(), '.torus') : nonEmpty(p.value, p.where, p.path)),
  },
  port: bounded({
    flag: 'port',
    short: 'p',
    key: 'port',
    bounds: whole(0, 65_535, 'a port number 0-65535'),
    fallback: DEFAULT_PORT,
    help: 'API port (0 picks a free one); the cluster listens on N+1, and static peers are given by their API port',
    example: ['6000', 6000],
  }),
  host: text({
    flag: 'host',
    key: 'host',
    arg: 'ADDR',
    fallback: '0.0.0.0',
    help: 'address the API and cluster listeners bind to',
    example: ['127.0.0.1', '127.0.0.1'],
  }),
  name: text({
    flag: 'name',
    key: 'name',
    arg: 'NAME',
    fallback: undefined,
    default: 'the host name',
    help: 'a readable name for this node',
    example: ['mac-1', 'mac-1'],
  }),
  cluster: text({
    flag: 'cluster',
    key: 'cluster',
    arg: 'NAME',
    fallback: 'torus',
    help: 'cluster name; nodes only join a cluster of the same name',
    example: ['lab', 'lab'],
  }),
  secretFile: {
    flag: 'secret-file',
    key: 'secretFile',
    arg: 'FILE',
    schema: Type.String(),
    expects: 'a file path',
    default: 'the secret saved in the data dir, else a new one printed as a join command',
    help: 'the cluster secret (a join token), read from a file',
    parse: raw,
  },
  secret: {
    flag: 'secret',
    key: 'secret',
    env: 'TORUS_SECRET',
    envBeforeConfig: true,
    arg: 'S',
    schema: Type.String(),
    expects: 'a non-empty string',
    default: 'as --secret-file',
    help: 'the cluster secret itself (visible in ps: prefer --secret-file or TORUS_SECRET); flag, file, env, config',
    parse: raw,
    example: ['s3cret', 's3cret'],
  },
  // Raw: config.ts names where it was set when it meets a secret.
  insecureOpen: {
    ...flag({
      flag: 'insecure-open',
      key: 'insecureOpen',
      help: "no credential at all: anyone who reaches the node controls it (exo's trust-the-LAN mode; docs/security.md)",
      example: [true, true],
    }),
    parse: raw,
  },
  apiTokenFile: {
    flag: 'api-token-file',
    key: 'apiTokenFile',
    arg: 'FILE',
    schema: Type.String(),
    expects: 'a file path',
    default: 'derived from the cluster secret',
    help: 'the API bearer token, read from a file (at least 16 characters)',
    parse: raw,
  },
  peers: {
    flag: 'peers',
    key: 'peers',
    arg: 'H:P,H:P',
    schema: Type.Union([Type.String(), Type.Array(Type.String())]),
    expects: 'host:port entries',
    default: 'none',
    help: 'static peers, for networks where multicast does not work; one reachable peer is enough',
    parse: (p) => (p.value === undefined ? [] : parsePeers(p.value, p.where, p.path)),
    example: ['10.77.0.2:52515', ['10.77.0.2:52515']],
  } satisfies OptionSpec<string[]>,
  ifaceTypes: {
    flag: 'iface-type',
    key: 'ifaceTypes',
    arg: 'NAME=TYPE',
    multiple: true,
    schema: Type.Union([Type.Array(Type.String()), Type.Record(Type.String(), Type.String())]),
    expects: 'NAME=TYPE entries',
    default: 'none',
    help: `label an interface the OS cannot classify (repeatable); TYPE is one of ${INTERFACE_TYPES.join(', ')}`,
    parse: (p) => (p.value === undefined ? {} : parseIfaceTypes(p.value, p.where, p.path)),
    example: ['en5=thunderbolt', { en5: 'thunderbolt' }],
  } satisfies OptionSpec<object>,
  mdns: {
    ...flag({
      flag: 'no-mdns',
      key: 'mdns',
      default: 'on',
      help: 'do not use multicast discovery (static peers only); in the config file, mdns: false',
      example: [true, false],
    }),
    parse: (p) => (p.value === undefined ? true : p.where === 'flag' ? false : p.value === true),
  },
  failureTimeoutMs: bounded({
    flag: 'failure-timeout-ms',
    key: 'failureTimeoutMs',
    bounds: millis(500, false),
    fallback: 4_000,
    help: 'declare a silent node gone after N ms',
    example: ['6000', 6000],
  }),
  // Shorter than the defaults only where a test or a small LAN needs faster reactions; each probe is a round trip.
  probeIntervalMs: bounded({
    flag: 'probe-interval-ms',
    key: 'probeIntervalMs',
    bounds: millis(500),
    fallback: 10_000,
    help: "probe each link's liveness every N ms: a cut link is down about that much later",
    example: ['2000', 2000],
  }),
  confirmMeasureMs: bounded({
    flag: 'confirm-measure-ms',
    key: 'confirmMeasureMs',
    bounds: millis(0),
    fallback: 15_000,
    help: 'measure each new link again N ms after the last new one, keeping the better sample (0: never)',
    example: ['0', 0],
  }),
  allowExec: {
    flag: 'allow-exec',
    key: 'allowExec',
    arg: '[=CMD,...]',
    schema: Type.Union([Type.Boolean(), Type.String(), Type.Array(Type.String())]),
    expects: 'true, false or a comma-separated list of commands',
    default: 'off',
    help: "run 'exec' workloads (arbitrary commands) placed here: all of them, or only the commands listed (basename, or absolute path); docs/security.md",
    parse: (p) => execPolicyOf(p.value, p.where, p.path),
    example: ['python3', ['python3']],
  } satisfies OptionSpec<unknown>,
  maxRunners: bounded({
    flag: 'max-runners',
    key: 'maxRunners',
    bounds: whole(1, 4096),
    fallback: DEFAULT_MAX_RUNNERS,
    help: 'runners this node holds at once; more are refused with a Failed status naming the quota',
    example: ['3', 3],
  }),
  maxInstances: bounded({
    flag: 'max-instances',
    key: 'maxInstances',
    bounds: whole(1, 100_000),
    fallback: DEFAULT_MAX_INSTANCES,
    help: 'live instances in the cluster, checked by the leader',
    example: ['9', 9],
  }),
  repairState: flag({
    flag: 'repair-state',
    help: "the saved cluster state is damaged (the node refused to start and said where): keep its readable part, move the rest aside, and catch up from the cluster's leader",
  }),
  maxPendingHandshakes: bounded({
    flag: 'max-pending-handshakes',
    key: 'maxPendingHandshakes',
    bounds: whole(1, 4096, 'an integer between 1 and 4096'),
    fallback: 64,
    help: 'cluster-port connections still proving the key, at most 8 per address (members are counted apart)',
    example: ['16', 16],
  }),
  deviceGflops: bounded({
    flag: 'device-gflops',
    key: 'deviceGflops',
    bounds: figure(1e9),
    fallback: undefined,
    default: 'measured on the CPU',
    help: "this node's compute in GFLOP/s, for an accelerator torus cannot measure from Node",
    example: ['12.5', 12.5],
  }),
  deviceMemBandwidth: bounded({
    flag: 'device-mem-bandwidth',
    key: 'deviceMemBandwidth',
    bounds: figure(1e6),
    fallback: undefined,
    default: 'measured on the CPU at start',
    help: 'its memory bandwidth in GB/s',
    example: ['400', 400],
  }),
  memoryLimit: {
    flag: 'memory-limit',
    key: 'memoryLimit',
    arg: 'SIZE',
    schema: Type.Union([Type.Number(), Type.String()]),
    expects: 'a size of at least 1MiB, like 24GiB, 512MiB or bytes',
    default: 'what the OS reports',
    help: 'offer at most this much memory to placements (e.g. 24GiB, 512MiB or bytes): caps the available and total memory the node advertises',
    parse: (p) => (p.value === undefined ? undefined : parseMemorySize(p.value, p.where, p.path)),
    example: ['64MiB', '64MiB'],
  } satisfies OptionSpec<number | undefined>,
  instancePorts: {
    flag: 'instance-ports',
    key: 'instancePorts',
    arg: 'MIN-MAX',
    schema: Type.String(),
    expects: '"MIN-MAX" as a string',
    default: `${DEFAULT_INSTANCE_PORTS.min}-${DEFAULT_INSTANCE_PORTS.max}`,
    help: "where the ports of placed instances (ring, coordinator) are drawn from, below every OS's default ephemeral range; the leader's applies, so set the same on every node (docs/placement.md)",
    parse: (p) => {
      if (p.value === undefined) return DEFAULT_INSTANCE_PORTS;
      const range =
        typeof p.value === 'string'
          ? parsePortRange(p.value)
          : `expected "MIN-MAX" as a string, got ${JSON.stringify(p.value)}`;
      if (typeof range === 'string') throw new ValidationError(p.where, p.path, range);
      return range;
    },
    example: ['20000-20999', '20000-20999'],
  } satisfies OptionSpec<unknown>,
  actorHeap: {
    flag: 'actor-heap',
    key: 'actorHeap',
    env: 'TORUS_ACTOR_HEAP',
    arg: 'SIZE|off',
    schema: Type.Union([Type.String(), Type.Number(), Type.Literal(false)]),
    expects: `a size of at least ${MIN_ACTOR_HEAP_MB}MiB (like 512MiB or 1GiB) or off`,
    default: `${DEFAULT_ACTOR_HEAP_MB}MiB`,
    help: "the V8 heap budget of each actor thread, with a 16 MiB young generation: a thread past it is restarted by its supervisor instead of taking the machine's memory; off: V8's defaults",
    parse: (p) => parseActorHeap(p.value, p.where, p.path),
    example: ['1GiB', '1GiB'],
  } satisfies OptionSpec<number | undefined>,
  idleGcMinutes: bounded({
    flag: 'idle-gc-minutes',
    key: 'idleGcMinutes',
    env: 'TORUS_IDLE_GC_MINUTES',
    bounds: whole(0, MAX_IDLE_GC_MINUTES),
    fallback: DEFAULT_IDLE_COLLECTION_MINUTES,
    help: 'a thread (main or actor) with no full garbage collection for N minutes runs one, so the garbage of a quiet thread goes back to the OS (0: never)',
    example: ['30', 30],
  }),
} satisfies Record<string, OptionSpec>;

const LAST_OPTIONS = {
  logLevel: {
    flag: 'log-level',
    key: 'logLevel',
    env: 'TORUS_LOG_LEVEL',
    arg: 'LEVEL',
    schema: Type.String(),
    expects: 'debug, info, warn, error or silent',
    default: 'warn',
    help: 'debug, info, warn, error, silent: JSON lines on stderr',
    parse: (p): LogLevel => {
      const level = p.value ?? 'warn';
      if (!isLogLevel(level))
        throw new ValidationError(
          p.where,
          p.path,
          `expected debug, info, warn, error or silent, got ${JSON.stringify(level)}`,
        );
      return level;
    },
    example: ['debug', 'debug'],
  } satisfies OptionSpec<LogLevel>,
  config: {
    flag: 'config',
    arg: 'FILE',
    expects: 'a file path',
    default: 'none',
    help: 'a JSON file with any of these options (camelCase keys); flags win',
    parse: (p) => (typeof p.value === 'string' ? p.value : undefined),
  } satisfies OptionSpec<string | undefined>,
  help: flag({ flag: 'help', short: 'h', help: 'show this help' }),
} satisfies Record<string, OptionSpec>;

/** Every option of `node dist/main.js start`, in the order the help and the README list them. */
export const NODE_OPTIONS = { ...CORE_OPTIONS, ...API_OPTIONS, ...RUNNER_FILES_OPTIONS, ...LAST_OPTIONS };
