/**
 * The instance as the runner side sees it: the placement plan (docs/placement.md shape: rank-ordered nodes,
 * shards, port, MLX ring hosts by node, jaccl coordinators) plus the workload to run on it.
 * Structural on purpose, so the placement and topology types fit without an import.
 */
import type { Backend, Sharding } from './placement-kinds.js';
import type { LogsSpec } from './log-rotation.js';

export type Workload =
  | { readonly kind: 'ring' }
  | {
      readonly kind: 'exec';
      readonly command: readonly string[];
      readonly cwd?: string;
      readonly env?: Readonly<Record<string, string>>;
      /** The job's restart budget (torchrun's --max-restarts), for TORCHELASTIC_MAX_RESTARTS. */
      readonly maxRestarts?: number;
    };

export interface HostAddress {
  readonly ip: string;
  readonly port: number;
}

export interface ShardPlacement {
  readonly node: string;
  readonly rank: number;
  readonly worldSize: number;
  readonly startLayer: number;
  /** Exclusive, as in exo. */
  readonly endLayer: number;
}

export interface RunnerInstance {
  readonly id: string;
  readonly backend: Backend;
  readonly sharding?: Sharding;
  /** Rank order. */
  readonly nodes: readonly string[];
  readonly shards: readonly ShardPlacement[];
  /** The ring's listening port (MLX's ephemeral port). */
  readonly port: number;
  readonly hostsByNode?: Readonly<Record<string, readonly HostAddress[]>>;
  readonly jacclCoordinators?: Readonly<Record<string, string>>;
  readonly jacclDevices?: readonly (readonly (string | null)[])[];
  /** Per node, an address every other rank reaches (MASTER_ADDR, *_SOCKET_IFNAME); absent in older plans. */
  readonly meshAddresses?: Readonly<Record<string, string>>;
  readonly workload: Workload;
  /** Group restarts of this job so far (TORCHELASTIC_RESTART_COUNT). */
  readonly restarts?: number;
  /** Artifact ids the runner needs on its node before it starts (workload.artifacts, docs/artifacts.md). */
  readonly artifacts?: readonly string[];
  /** The model artifact (workload.model): a pipeline stage's runner gets its layers in TORUS_MODEL_DIR (docs/artifacts.md). */
  readonly model?: string;
  /** How each runner keeps its stdout and stderr (absent: the node's defaults). */
  readonly logs?: LogsSpec;
}

/** One runner per (instance, node): its id is derived, so every node names the same runner the same way. */
export function runnerIdOf(instanceId: string, nodeId: string): string {
  return `${instanceId}@${nodeId}`;
}

export function shardOf(instance: RunnerInstance, nodeId: string): ShardPlacement | undefined {
  return instance.shards.find((s) => s.node === nodeId);
}
