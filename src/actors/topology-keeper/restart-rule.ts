/**
 * The restart rule of an instance, decided in one place: the leader's re-placement (the planner's
 * ReplaceInstance) and every reader of a failed job (re-placement triggers, the API's job state, whether a rank
 * may still write its logs) ask the same function.
 */
import type { InstanceRecord } from './state.js';

export type JobRestart =
  | { kind: 'replace' }
  | { kind: 'restart'; restarts: number; max: number }
  | { kind: 'fail'; reason: string }
  | { kind: 'nothing' };

/**
 * What a re-placement means for this instance. Without a restart policy: re-place as always (node lost). A job
 * with one (torchrun's --max-restarts): a failure or a lost node restarts the whole group while restarts are
 * left, else the job fails; a finished job (failed for good, or completed) is left alone.
 */
export function jobRestart(record: InstanceRecord, reason: string): JobRestart {
  const restart = record.workload.kind === 'exec' ? record.workload.restart : undefined;
  if (record.status === 'completed') return { kind: 'nothing' };
  if (!restart) return { kind: 'replace' };
  const done = record.restarts ?? 0;
  if (restart.policy === 'on-failure' && done < restart.max)
    return { kind: 'restart', restarts: done + 1, max: restart.max };
  if (record.status === 'failed') return { kind: 'nothing' };
  const why = restart.policy === 'never' ? 'restart policy never' : `gave up after ${done} restarts`;
  return { kind: 'fail', reason: `${reason}; ${why}`.slice(0, 1024) };
}

/**
 * A job the rule would restart as a group (restart policy on-failure, restarts left, torchrun's --max-restarts),
 * unless a re-placement was already refused (`final`): it waits in `restarting`. An explicit ReplaceInstance
 * still asks `jobRestart` alone, so a user may retry a `final` job.
 */
export function restartable(instance: InstanceRecord): boolean {
  return instance.final !== true && jobRestart(instance, '').kind === 'restart';
}
