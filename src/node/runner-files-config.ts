/**
 * What a node keeps of its runners on disk: how each rank's stdout and stderr rotate (Nomad's `logs` block), and
 * when the directories of finished runs are collected (Nomad's client `gc_max_allocs`, `gc_disk_usage_threshold`).
 * Kept apart from config.ts so each area's options stay in one block.
 */
import {
  DEFAULT_LOG_ROTATION,
  MAX_LOG_FILE_BYTES,
  MAX_LOG_FILES,
  MIN_LOG_FILE_BYTES,
  type LogRotation,
} from '../protocols/log-rotation.js';
import { DEFAULT_RUN_RETENTION, type RunRetention } from '../protocols/run-retention.js';
import { type Pick, wholeNumber as whole } from './config-values.js';

export interface RunnerFilesConfig {
  readonly logRotation: LogRotation;
  readonly runRetention: RunRetention;
}

export const RUNNER_FILES_FLAGS = {
  'log-max-files': { type: 'string' },
  'log-max-file-bytes': { type: 'string' },
  'keep-finished-runs': { type: 'string' },
  'finished-run-max-age-hours': { type: 'string' },
  'gc-disk-usage-percent': { type: 'string' },
} as const;

export const RUNNER_FILES_CONFIG_KEYS = [
  'logMaxFiles',
  'logMaxFileBytes',
  'keepFinishedRuns',
  'finishedRunMaxAgeHours',
  'gcDiskUsagePercent',
];

const MIB = 1024 * 1024;
export const RUNNER_FILES_USAGE = `  --log-max-files N       files kept per runner stream, stdout and stderr each (default ${DEFAULT_LOG_ROTATION.maxFiles})
  --log-max-file-bytes N  a runner log file rotates at N bytes (default ${DEFAULT_LOG_ROTATION.maxFileBytes}, ${DEFAULT_LOG_ROTATION.maxFileBytes / MIB} MiB);
                          an instance's workload.logs overrides both
  --keep-finished-runs N  runner directories (logs, hostfile) of finished runs kept per node (default ${DEFAULT_RUN_RETENTION.keepFinished})
  --finished-run-max-age-hours H  finished runs older than this are removed (default ${DEFAULT_RUN_RETENTION.maxAgeMs / 3_600_000}; 0: no age limit)
  --gc-disk-usage-percent P  the data dir's filesystem this full: finished runs are removed at once, oldest
                          first, until it is below (default ${DEFAULT_RUN_RETENTION.diskUsagePercent}; 100: never)`;

export function parseRunnerFilesConfig(pick: Pick): RunnerFilesConfig {
  const hours = whole(
    pick('finished-run-max-age-hours', 'finishedRunMaxAgeHours'),
    DEFAULT_RUN_RETENTION.maxAgeMs / 3_600_000,
    0,
    100_000,
  );
  return {
    logRotation: {
      maxFiles: whole(pick('log-max-files', 'logMaxFiles'), DEFAULT_LOG_ROTATION.maxFiles, 1, MAX_LOG_FILES),
      maxFileBytes: whole(
        pick('log-max-file-bytes', 'logMaxFileBytes'),
        DEFAULT_LOG_ROTATION.maxFileBytes,
        MIN_LOG_FILE_BYTES,
        MAX_LOG_FILE_BYTES,
      ),
    },
    runRetention: {
      keepFinished: whole(
        pick('keep-finished-runs', 'keepFinishedRuns'),
        DEFAULT_RUN_RETENTION.keepFinished,
        0,
        100_000,
      ),
      maxAgeMs: hours * 3_600_000,
      diskUsagePercent: whole(
        pick('gc-disk-usage-percent', 'gcDiskUsagePercent'),
        DEFAULT_RUN_RETENTION.diskUsagePercent,
        1,
        100,
      ),
    },
  };
}
