/**
 * Which runner directories are finished runs, and which of them go (Nomad's client GC of allocation
 * directories). Pure: the shell (run-collector.ts) lists the directories and removes what this answers.
 *
 * A directory is protected while its instance may still write to it here: held by this node's runner manager,
 * or in the cluster state and not finished (active, awaiting re-placement, or failed with a restart policy that
 * may rerun it). Everything else under `runners/` is a finished run: a deleted instance, a completed or finally
 * failed job, a directory an older run left behind.
 */
export interface RunDir {
  readonly name: string;
  /** When anything in it was last written (ms since the epoch): a finished run's age is counted from there. */
  readonly lastWriteMs: number;
}

export interface InstanceFacts {
  readonly status: string;
  readonly workload: { readonly kind: string; readonly restart?: { readonly policy: string } };
}

/** Whether an instance in the cluster state may still run a rank (and so write its directory). */
export function mayRunAgain(record: InstanceFacts): boolean {
  if (record.status === 'completed') return false;
  if (record.status !== 'failed') return true;
  // A failed job is re-placed while it has restarts left; without its count here, an on-failure job is kept.
  return record.workload.kind === 'exec' && record.workload.restart?.policy === 'on-failure';
}

export interface Retention {
  readonly keepFinished: number;
  /** 0: no age limit. */
  readonly maxAgeMs: number;
}

/** The finished runs past the retention: beyond the newest `keepFinished`, or older than `maxAgeMs`. Oldest first. */
export function pastRetention(finished: readonly RunDir[], retention: Retention, nowMs: number): RunDir[] {
  const newestFirst = [...finished].sort((a, b) => b.lastWriteMs - a.lastWriteMs || a.name.localeCompare(b.name));
  return newestFirst
    .filter(
      (run, i) =>
        i >= retention.keepFinished || (retention.maxAgeMs > 0 && nowMs - run.lastWriteMs > retention.maxAgeMs),
    )
    .reverse();
}

/** Finished runs to remove when the disk is low: all of them, oldest first (the shell stops once there is room). */
export function oldestFirst(finished: readonly RunDir[]): RunDir[] {
  return [...finished].sort((a, b) => a.lastWriteMs - b.lastWriteMs || a.name.localeCompare(b.name));
}
