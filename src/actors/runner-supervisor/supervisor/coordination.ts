/**
 * Multi-node start-up coordination, as in exo's worker `plan()`, as one pure function over the statuses of
 * an instance's runners (indexed by rank). The shell calls it whenever any status changes and performs the
 * step it returns. Deviations from exo, each because torus's connect and warm-up can finish instantly
 * (an `exec` job has nothing to join), where exo's rules would wait forever on a state already passed:
 * - the last rank connects when every other runner is Connecting *or Connected* (exo: Connecting);
 * - rank 0 warms up when every other runner is WarmingUp *or Ready* (exo: WarmingUp).
 * A runner whose lifecycle steps are its own (`localSteps`: an `exec` job, whose connect writes a hostfile from the
 * plan and whose load and warm-up do nothing) goes through them without waiting for anyone: each wait above is a
 * round of peers' statuses through the cluster log (proposed, committed, applied on every node), which bought such
 * a job nothing and cost its start one round per barrier. Its command still runs only when every rank is Ready.
 */
import type { RunnerState, RunnerStatus } from '../../../protocols/runner-status.js';

export interface CoordinationInput {
  readonly rank: number;
  readonly worldSize: number;
  /** Index = rank, including this runner. `undefined` = not reported yet (counts as Idle). */
  readonly statuses: readonly (RunnerStatus | undefined)[];
  /** A lifecycle step (connect/load/warmup/shutdown) was sent and has not finished yet. */
  readonly stepInFlight: boolean;
  /** Tasks of the instance not yet handed to this runner, in submission order. */
  readonly pendingTasks: readonly string[];
  /** connect, load and warm-up involve no other rank (an exec job): each goes at once, without the barriers */
  readonly localSteps?: boolean;
}

export type Step =
  | { readonly kind: 'shutdown'; readonly reason: string }
  | { readonly kind: 'connect' }
  | { readonly kind: 'load' }
  | { readonly kind: 'warmup' }
  | { readonly kind: 'run'; readonly taskId: string }
  | { readonly kind: 'wait'; readonly why: string };

const stateOf = (s: RunnerStatus | undefined): RunnerState => s?.state ?? 'Idle';

function allIn(input: CoordinationInput, allowed: readonly RunnerState[], exceptSelf = false): boolean {
  for (let r = 0; r < input.worldSize; r++) {
    if (exceptSelf && r === input.rank) continue;
    if (!allowed.includes(stateOf(input.statuses[r]))) return false;
  }
  return true;
}

export function decideNextStep(input: CoordinationInput): Step {
  const own = input.statuses[input.rank];
  if (own === undefined) return { kind: 'wait', why: 'runner not started' };
  if (own.state === 'Failed') return { kind: 'shutdown', reason: `failed: ${own.reason}` };
  if (own.state === 'ShuttingDown' || own.state === 'Shutdown') return { kind: 'wait', why: 'stopping' };
  for (let r = 0; r < input.worldSize; r++) {
    const s = input.statuses[r];
    if (r !== input.rank && s?.state === 'Failed') return { kind: 'shutdown', reason: `rank ${r} failed: ${s.reason}` };
  }
  if (input.stepInFlight) return { kind: 'wait', why: 'step in flight' };
  const last = input.worldSize - 1;
  if (input.localSteps) {
    if (own.state === 'Idle') return { kind: 'connect' };
    if (own.state === 'Connected') return { kind: 'load' };
    if (own.state === 'Loaded') return { kind: 'warmup' };
  }
  switch (own.state) {
    case 'Idle':
      if (!allIn(input, ['Idle', 'Connecting', 'Connected']))
        return { kind: 'wait', why: 'others not ready to connect' };
      if (input.rank === last && input.worldSize > 1 && !allIn(input, ['Connecting', 'Connected'], true)) {
        return { kind: 'wait', why: 'last rank connects last' };
      }
      return { kind: 'connect' };
    case 'Connected':
      return allIn(input, ['Connected', 'Loading', 'Loaded'])
        ? { kind: 'load' }
        : { kind: 'wait', why: 'others not connected' };
    case 'Loaded':
      if (input.rank === 0) {
        return allIn(input, ['WarmingUp', 'Ready'], true)
          ? { kind: 'warmup' }
          : { kind: 'wait', why: 'rank 0 warms up last' };
      }
      return allIn(input, ['Loaded', 'WarmingUp', 'Ready'])
        ? { kind: 'warmup' }
        : { kind: 'wait', why: 'others not loaded' };
    case 'Ready':
    case 'Running': {
      const next = input.pendingTasks[0];
      if (next === undefined) return { kind: 'wait', why: 'no task' };
      return allIn(input, ['Ready', 'Running'])
        ? { kind: 'run', taskId: next }
        : { kind: 'wait', why: 'others not ready' };
    }
    default:
      return { kind: 'wait', why: `${own.state} in progress` };
  }
}
