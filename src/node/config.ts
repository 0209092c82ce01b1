/**
 * Node configuration: defaults, an optional JSON config file, environment variables, then command-line flags
 * (flags win), all as the option table (option-table.ts) says. Every value is checked where it enters; a bad flag,
 * file or variable is a ValidationError naming it, and nothing starts.
 */
import type { PortRange } from '../actors/placement-planner/search/ports.js';
import { ValidationError } from '../protocols/errors.js';
import type { ExecPolicy } from '../protocols/exec-policy.js';
import type { InterfaceType } from '../protocols/interface-types.js';
import type { LogLevel } from '../runtime/log.js';
import { type ApiConfig, apiConfigOf } from './api-config.js';
import { readSecretFile } from './config-parsers.js';
import type { PickedValue } from './config-values.js';
import type { SecretSource } from './credentials.js';
import { nonEmpty } from './option-spec.js';
import { NODE_OPTIONS } from './option-table.js';
import { readOptions } from './parse-options.js';
import { type RunnerFilesConfig, runnerFilesConfigOf } from './runner-files-config.js';

export { DEFAULT_ACTOR_HEAP_MB, parseMemorySize } from './config-parsers.js';
export { DEFAULT_PORT } from './option-table.js';
export { NODE_USAGE } from './usage.js';

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
 * With a budget, each actor's young generation is held to this much. V8's default lets the new space grow to tens
 * of MiB under a steady allocation rate and keeps it committed (on Node 26 up to 96 MiB per thread); an actor's
 * short-lived objects are small messages, and a worker churning 30-60 MiB live spends about the same CPU with a
 * 16 MiB young generation while committing less than half the heap.
 */
export const ACTOR_YOUNG_GENERATION_MB = 16;

/** The credential, in precedence order: --secret, --secret-file, TORUS_SECRET, config secret, config secretFile. */
function pickSecret(secret: PickedValue, file: PickedValue): { secret?: string; source?: SecretSource } {
  const fromFile = (f: PickedValue) => readSecretFile(nonEmpty(f.value, f.where, f.path), f.where, f.path);
  if (secret.path === '--secret') return { secret: nonEmpty(secret.value, 'flag', '--secret'), source: 'flag' };
  if (file.where === 'flag' && file.value !== undefined) return { secret: fromFile(file), source: 'file' };
  if (secret.value !== undefined)
    return {
      secret: nonEmpty(secret.value, secret.where, secret.path),
      source: secret.where === 'flag' ? 'env' : 'config',
    };
  if (file.value !== undefined) return { secret: fromFile(file), source: 'file' };
  return {};
}

export interface ParsedNodeArgs {
  readonly help: boolean;
  readonly config: NodeConfig;
}

/** Parses `start` flags (after the subcommand). Throws ValidationError on any bad flag or config value. */
export function parseNodeArgs(args: readonly string[], env: NodeJS.ProcessEnv = process.env): ParsedNodeArgs {
  const v = readOptions(NODE_OPTIONS, args, env);
  const { secret, source: secretSource } = pickSecret(v.secret, v.secretFile);
  const insecureOpen = v.insecureOpen.value === true;
  if (insecureOpen && secret !== undefined)
    throw new ValidationError(v.insecureOpen.where, v.insecureOpen.path, 'cannot be combined with a cluster secret');
  const tokenFile = v.apiTokenFile;
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

  return {
    help: v.help,
    config: {
      dataDir: v.dataDir,
      port: v.port,
      host: v.host,
      name: v.name,
      cluster: v.cluster,
      secret,
      secretSource,
      insecureOpen,
      apiToken,
      peers: v.peers,
      ifaceTypes: v.ifaceTypes,
      logLevel: v.logLevel,
      mdns: v.mdns,
      failureTimeoutMs: v.failureTimeoutMs,
      probeIntervalMs: v.probeIntervalMs,
      confirmMeasureMs: v.confirmMeasureMs,
      allowExec: v.allowExec,
      maxRunners: v.maxRunners,
      maxInstances: v.maxInstances,
      repairState: v.repairState,
      maxPendingHandshakes: v.maxPendingHandshakes,
      deviceGflops: v.deviceGflops,
      deviceMemBandwidthGBps: v.deviceMemBandwidth,
      memoryLimitBytes: v.memoryLimit,
      instancePorts: v.instancePorts,
      actorHeapMb: v.actorHeap,
      idleGcMinutes: v.idleGcMinutes,
      ...apiConfigOf(v),
      ...runnerFilesConfigOf(v),
    },
  };
}
