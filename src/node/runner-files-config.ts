/**
 * What a node keeps of its runners on disk: how each rank's stdout and stderr rotate (Nomad's `logs` block), and
 * when the directories of finished runs are collected (Nomad's client `gc_max_allocs`, `gc_disk_usage_threshold`).
 * Their entries of the option table (option-table.ts).
 */
import {
  DEFAULT_LOG_ROTATION,
  MAX_LOG_FILE_BYTES,
  MAX_LOG_FILES,
  MIN_LOG_FILE_BYTES,
  type LogRotation,
} from '../protocols/log-rotation.js';
import { DEFAULT_RUN_RETENTION, type RunRetention } from '../protocols/run-retention.js';
import { whole } from './config-values.js';
import { bounded, type OptionSpec } from './option-spec.js';
import type { OptionValues } from './parse-options.js';

export interface RunnerFilesConfig {
  readonly logRotation: LogRotation;
  readonly runRetention: RunRetention;
}

const MIB = 1024 * 1024;
const HOUR_MS = 3_600_000;

export const RUNNER_FILES_OPTIONS = {
  logMaxFiles: bounded({
    flag: 'log-max-files',
    key: 'logMaxFiles',
    bounds: whole(1, MAX_LOG_FILES),
    fallback: DEFAULT_LOG_ROTATION.maxFiles,
    help: "files kept per runner stream, stdout and stderr each; an instance's workload.logs wins (docs/runners.md)",
    example: ['3', 3],
  }),
  logMaxFileBytes: bounded({
    flag: 'log-max-file-bytes',
    key: 'logMaxFileBytes',
    bounds: whole(MIN_LOG_FILE_BYTES, MAX_LOG_FILE_BYTES),
    fallback: DEFAULT_LOG_ROTATION.maxFileBytes,
    default: `${DEFAULT_LOG_ROTATION.maxFileBytes} (${DEFAULT_LOG_ROTATION.maxFileBytes / MIB} MiB)`,
    help: "a runner log file rotates at N bytes; an instance's workload.logs wins",
    example: ['65536', 65536],
  }),
  keepFinishedRuns: bounded({
    flag: 'keep-finished-runs',
    key: 'keepFinishedRuns',
    bounds: whole(0, 100_000),
    fallback: DEFAULT_RUN_RETENTION.keepFinished,
    help: 'runner directories (logs, hostfile) of finished runs kept per node',
    example: ['0', 0],
  }),
  finishedRunMaxAgeHours: bounded({
    flag: 'finished-run-max-age-hours',
    key: 'finishedRunMaxAgeHours',
    arg: 'H',
    bounds: whole(0, 100_000),
    fallback: DEFAULT_RUN_RETENTION.maxAgeMs / HOUR_MS,
    help: 'finished runs older than this are removed (0: no age limit)',
    example: ['0', 0],
  }),
  gcDiskUsagePercent: bounded({
    flag: 'gc-disk-usage-percent',
    key: 'gcDiskUsagePercent',
    arg: 'P',
    bounds: whole(1, 100),
    fallback: DEFAULT_RUN_RETENTION.diskUsagePercent,
    help: "the data dir's filesystem this full: finished runs are removed at once, oldest first, until it is below (100: never)",
    example: ['95', 95],
  }),
} satisfies Record<string, OptionSpec>;

export function runnerFilesConfigOf(v: OptionValues<typeof RUNNER_FILES_OPTIONS>): RunnerFilesConfig {
  return {
    logRotation: { maxFiles: v.logMaxFiles, maxFileBytes: v.logMaxFileBytes },
    runRetention: {
      keepFinished: v.keepFinishedRuns,
      maxAgeMs: v.finishedRunMaxAgeHours * HOUR_MS,
      diskUsagePercent: v.gcDiskUsagePercent,
    },
  };
}
