/** What a RunnerManager is given (runner-manager.ts) and the cluster events it reports. */
import type { RestartPolicy } from '../../../runtime/restart-policy.js';
import type { ExecPolicy } from '../../../protocols/exec-policy.js';
import type { RunnerInstance } from '../../../protocols/runner-instance.js';
import type {
  InstanceCompleted,
  InstanceFailed,
  RunnerStatusChanged,
  TaskStatusChanged,
} from '../../../protocols/events.js';
import type { LogRotation } from '../../../protocols/log-rotation.js';
import type { ShutdownDeadlines } from './runner-process.js';

export type ManagerEvent = RunnerStatusChanged | TaskStatusChanged | InstanceFailed | InstanceCompleted;

export interface RunnerManagerOptions {
  readonly nodeId: string;
  /** Runner files go to `<dataDir>/runners/<runnerId>/` (hostfile.json, stdout.*.log, stderr.*.log). */
  readonly dataDir: string;
  /** This node's default log rotation (an instance's `workload.logs` wins); default 10 files × 10 MiB per stream. */
  readonly logRotation?: LogRotation;
  readonly onEvent: (event: ManagerEvent) => void;
  readonly policy?: RestartPolicy;
  readonly deadlines?: ShutdownDeadlines;
  readonly cancelTimeoutMs?: number;
  readonly ackTimeoutMs?: number;
  /** A runner Ready this long has its failure count forgotten. */
  readonly stableResetMs?: number;
  /** Start an exec workload's command as soon as every runner is Ready (default true). */
  readonly autoExec?: boolean;
  /** Extra environment for runner processes (test hooks). */
  readonly runnerEnv?: Readonly<Record<string, string>>;
  /** Data-plane key handed to ring runners in their start frame (never in the environment); null: open mode. */
  readonly dataKey?: string | null;
  /** Told of every runner process started (logging, tests). */
  readonly onSpawn?: (runnerId: string, pid: number | undefined, generation: number) => void;
  /**
   * Which `exec` commands this node runs. Checked here, at spawn time, whoever proposed the instance:
   * a refused runner is Failed with the reason and no process is started. Default false: exec is off.
   */
  readonly allowExec?: ExecPolicy;
  /** Runners held at once (default 8); one more is refused the same way, naming the quota. */
  readonly maxRunners?: number;
  /** Told once each time the runner quota is reached (the node logs it). */
  readonly onLimit?: (message: string) => void;
  /** Told of runner output that could not be written to its log files (the node logs and counts it). */
  readonly onLogDropped?: (runnerId: string, stream: 'stdout' | 'stderr', bytes: number, error: Error) => void;
  /**
   * For an instance that lists artifacts: resolves, once this node holds every one of them complete (fetching what
   * is missing), with the runner's environment naming their paths; rejects with the reason it cannot have them.
   * `cancelled()` turns true when the runner is no longer wanted. Absent: such an instance is refused.
   */
  readonly awaitArtifacts?: (
    instance: RunnerInstance,
    cancelled: () => boolean,
  ) => Promise<Readonly<Record<string, string>>>;
}
