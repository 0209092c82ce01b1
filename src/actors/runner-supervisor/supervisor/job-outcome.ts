/**
 * How one rank's failed command becomes the job's failure (as torchrun / mpirun report it): the rank,
 * its node, the exit code or signal, and the tail of what it wrote, in one InstanceFailed. The cluster keeps the
 * first failure; every node then stops its rank.
 */
import type { CommandOutcome } from './command-outcome.js';
import type { InstanceFailed } from '../../../protocols/events.js';
import type { LocalRunner } from './local-runner.js';

/** Lines of the rank's output quoted in the reason (the reason is bounded to 1024 characters). */
const TAIL_LINES = 6;

export function jobFailure(
  local: LocalRunner,
  nodeId: string,
  outcome: CommandOutcome,
  diagnostics: readonly string[],
): InstanceFailed {
  const how =
    outcome.exitCode !== undefined
      ? `exited with code ${outcome.exitCode}`
      : outcome.signal
        ? `was killed by ${outcome.signal}`
        : outcome.reason;
  // The tail keeps stderr lines: stdout lines are tagged `[stdout]`, supervisor notes `supervisor:` (line-tail.ts).
  const tail = diagnostics
    .filter((l) => !l.startsWith('[stdout] ') && !l.startsWith('supervisor:'))
    .slice(-TAIL_LINES)
    .join(' | ');
  const head = `rank ${local.rank} (node ${nodeId}) ${how}`;
  const reason = tail ? `${head}; stderr: ${tail}` : head;
  return {
    type: 'InstanceFailed',
    instanceId: local.instance.id,
    reason: reason.length > 1000 ? `${reason.slice(0, 997)}...` : reason,
    rank: local.rank,
    nodeId,
    ...(outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}),
    ...(outcome.signal ? { signal: outcome.signal } : {}),
  };
}
