/**
 * The tasks handed to one runner process (`LocalRunner.sent`): dispatch with the task's timeout, what a task
 * status from the runner settles, and which statuses this node reports to the cluster. Reporting across ranks:
 * rank 0 reports running/complete (with its result); any rank reports failed, cancelled or timed_out.
 */
import { commandOutcome } from './command-outcome.js';
import type { TaskStatus } from '../../../protocols/runner-status.js';
import type { Json, TaskStatusChanged } from '../../../protocols/events.js';
import type { LocalRunner, Queued } from './local-runner.js';
import type { RunnerProcess } from './runner-process.js';

/** Hands the next queued task to the runner; one that outlives its `timeoutMs` is cancelled (and reported timed_out). */
export function dispatchNext(local: LocalRunner, proc: RunnerProcess): void {
  const task = local.queue.shift()!;
  const entry: { task: Queued; timer?: NodeJS.Timeout; timedOut: boolean } = { task, timedOut: false };
  if (task.timeoutMs !== undefined) {
    entry.timer = setTimeout(() => {
      entry.timedOut = true;
      void proc.cancelTask(task.taskId);
    }, task.timeoutMs);
  }
  local.sent.set(task.taskId, entry);
  void proc.startTask({ type: 'task', taskId: task.taskId, op: task.kind, params: task.params ?? {} });
}

/**
 * A status the runner sent for a task: null when this runner was not given that task; otherwise the bookkeeping
 * is settled and `report` is the event this node reports (null when another rank reports it, or a local task).
 */
export function settleTaskStatus(
  local: LocalRunner,
  taskId: string,
  status: TaskStatus,
  result?: unknown,
  error?: string,
): { report: TaskStatusChanged | null } | null {
  const sent = local.sent.get(taskId);
  if (!sent) return null;
  const reported: TaskStatus = status === 'cancelled' && sent.timedOut ? 'timed_out' : status;
  if (reported !== 'running' && reported !== 'pending') {
    clearTimeout(sent.timer);
    local.sent.delete(taskId);
  }
  if (sent.task.local && sent.task.kind === 'exec') local.commandOutcome = commandOutcome(reported, result, error);
  const mine = reported === 'running' || reported === 'complete' ? local.rank === 0 : true;
  if (sent.task.local || !mine) return { report: null };
  return {
    report: {
      type: 'TaskStatusChanged',
      taskId,
      status: reported,
      ...(reported === 'complete' && result !== undefined ? { result: result as Json } : {}),
      ...(error ? { error } : {}),
    },
  };
}

/** The runner process is gone: every task it held fails (cluster tasks are reported through `report`, in order). */
export function failSentTasks(local: LocalRunner, cause: string, report: (event: TaskStatusChanged) => void): void {
  for (const [taskId, s] of local.sent) {
    clearTimeout(s.timer);
    if (!s.task.local) {
      report({
        type: 'TaskStatusChanged',
        taskId,
        status: 'failed',
        error: `Runner shutdown before completing the task (${cause})`,
      });
    }
  }
  local.sent.clear();
}
