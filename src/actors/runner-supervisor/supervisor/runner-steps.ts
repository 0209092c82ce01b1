/**
 * Drives one live runner through the lifecycle: asks `decideNextStep` (coordination.ts) what the rank does next
 * given every rank's status, and does it on the runner process (a lifecycle step, a queued task, a shutdown).
 */
import type { RunnerStatus } from '../../../protocols/runner-status.js';
import { decideNextStep } from './coordination.js';
import type { LocalRunner } from './local-runner.js';
import type { RunnerProcess, ShutdownDeadlines } from './runner-process.js';
import { dispatchNext } from './runner-tasks.js';

export function stepRunner(
  local: LocalRunner,
  proc: RunnerProcess,
  peers: ReadonlyMap<string, RunnerStatus>,
  deadlines: ShutdownDeadlines,
): void {
  const worldSize = local.instance.shards.length;
  const statuses = Array.from({ length: worldSize }, (_, r) => {
    if (r === local.rank) return local.status;
    const node = local.instance.shards.find((s) => s.rank === r)?.node;
    return node === undefined ? undefined : peers.get(node);
  });
  for (;;) {
    const step = decideNextStep({
      rank: local.rank,
      worldSize,
      statuses,
      stepInFlight: local.stepInFlight !== undefined,
      pendingTasks: local.queue.map((q) => q.taskId),
      localSteps: local.instance.workload.kind === 'exec',
    });
    switch (step.kind) {
      case 'wait':
        return;
      case 'shutdown':
        if (local.status?.state === 'Failed') return; // its exit restarts it
        local.parked = true;
        local.stepInFlight = `${local.runnerId}#${local.generation}:shutdown`;
        void proc.shutdown(deadlines, local.stepInFlight);
        return;
      case 'run':
        dispatchNext(local, proc);
        continue; // more queued tasks may go while Running
      default:
        local.stepInFlight = `${local.runnerId}#${local.generation}:${step.kind}`;
        void proc.startTask({ type: step.kind, taskId: local.stepInFlight });
        return;
    }
  }
}
