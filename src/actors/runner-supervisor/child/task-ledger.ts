/**
 * Task dedupe: a task id is admitted once (a task sent twice runs once), and a task in a terminal status
 * stays there (a late "running" after "cancelled" is ignored). Immutable, so it can live in xstate context.
 */
import { isTerminalTaskStatus, type TaskStatus } from '../../../protocols/runner-status.js';

export type TaskLedger = ReadonlyMap<string, TaskStatus>;
export const emptyLedger: TaskLedger = new Map();

export function admitTask(ledger: TaskLedger, taskId: string): { ledger: TaskLedger; admitted: boolean } {
  if (ledger.has(taskId)) return { ledger, admitted: false };
  return { ledger: new Map(ledger).set(taskId, 'pending'), admitted: true };
}

/** Returns the same ledger when the change is not allowed (unknown task, or already terminal). */
export function setTaskStatus(ledger: TaskLedger, taskId: string, status: TaskStatus): TaskLedger {
  const current = ledger.get(taskId);
  if (current === undefined || isTerminalTaskStatus(current) || current === status) return ledger;
  return new Map(ledger).set(taskId, status);
}

export function activeTasks(ledger: TaskLedger): string[] {
  return [...ledger].filter(([, s]) => !isTerminalTaskStatus(s)).map(([id]) => id);
}
