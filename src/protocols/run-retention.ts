/**
 * How long a node keeps the directories of finished runs (their logs and hostfile), as Nomad's client collects
 * old allocations: at most `keepFinished` of them, none older than `maxAgeMs`, and at once, oldest first, while
 * the data dir's filesystem is fuller than `diskUsagePercent`. A running instance's directory is never removed.
 */
export interface RunRetention {
  /** Finished runs kept per node (Nomad's gc_max_allocs is 50). */
  readonly keepFinished: number;
  /** Finished runs older than this are removed; 0: no age limit. */
  readonly maxAgeMs: number;
  /** Usage of the data dir's filesystem, percent, above which finished runs go at once (Nomad: 80). */
  readonly diskUsagePercent: number;
}

export const DEFAULT_RUN_RETENTION: RunRetention = {
  keepFinished: 50,
  maxAgeMs: 7 * 24 * 3_600_000, // a week: a job that ended on Friday can still be read on Monday
  diskUsagePercent: 80,
};
