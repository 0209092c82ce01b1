/**
 * The one restart policy of torus, for actor workers (the supervisor) and runner processes (the runner
 * supervisor) alike: exponential backoff between restarts, and a limit after which the supervisor gives up
 * (an actor escalates to its parent, a runner's job fails with a reason). Pure: the caller owns clock and timers.
 *
 * The two callers count crashes differently and say so by the function they call: the actor supervisor counts
 * the crashes within `periodMs` (the restart intensity, as in Erlang/OTP), the runner supervisor counts the exits
 * in a row, a run that stayed up for `periodMs` starting the count again.
 */
export interface RestartPolicy {
  /** Restarts allowed; the crash after the last one gives up. */
  readonly maxRestarts: number;
  /** How long a crash counts: actors, the intensity window; runners, the stable run that resets the count. */
  readonly periodMs: number;
  /** Delay before restart n (1-based): initialDelayMs · factor^(n−1), at most maxDelayMs. */
  readonly initialDelayMs: number;
  readonly factor: number;
  readonly maxDelayMs: number;
}

/** Actor workers: crashes are bugs or lost threads; restart fast, give up on a crash loop. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  maxRestarts: 5,
  periodMs: 30_000,
  initialDelayMs: 100,
  maxDelayMs: 5_000,
  factor: 2,
};

/** Runner processes: a job that dies is given time (0.5 s doubling to 10 s), five times in a row. */
export const RUNNER_RESTART_POLICY: RestartPolicy = {
  maxRestarts: 5,
  periodMs: 60_000,
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  factor: 2,
};

/** Delay before restart number `attempt` (1-based); 0 before the first. */
export function backoffDelayMs(attempt: number, policy: RestartPolicy): number {
  if (attempt < 1) return 0;
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** (attempt - 1));
}

export type RestartDecision =
  | {
      readonly action: 'restart';
      readonly delayMs: number;
      readonly attempt: number;
      readonly history: readonly number[];
    }
  | { readonly action: 'escalate'; readonly reason: string; readonly history: readonly number[] };

/**
 * An actor crashed: restart, or escalate once more than `maxRestarts` crashes fall within `periodMs`.
 * @param history times (ms) of earlier crashes still remembered
 * @param now the time of this crash
 */
export function decideRestart(
  history: readonly number[],
  now: number,
  policy: RestartPolicy = DEFAULT_RESTART_POLICY,
): RestartDecision {
  const recent = [...history.filter((at) => now - at < policy.periodMs), now];
  if (recent.length > policy.maxRestarts) {
    return {
      action: 'escalate',
      reason: `${recent.length} crashes within ${policy.periodMs} ms exceed the restart intensity of ${policy.maxRestarts}`,
      history: recent,
    };
  }
  const attempt = recent.length;
  return { action: 'restart', delayMs: backoffDelayMs(attempt, policy), attempt, history: recent };
}

export type InRowDecision =
  | { readonly kind: 'restart'; readonly attempt: number; readonly delayMs: number }
  | { readonly kind: 'give-up'; readonly reason: string };

/** A runner exited unexpectedly for the `failures`-th time in a row (1-based), with `cause` like "signal=SIGKILL". */
export function decideRestartInRow(
  failures: number,
  cause: string,
  policy: RestartPolicy = RUNNER_RESTART_POLICY,
): InRowDecision {
  if (failures > policy.maxRestarts) {
    return { kind: 'give-up', reason: `gave up after ${policy.maxRestarts} restarts; last exit: ${cause}` };
  }
  return { kind: 'restart', attempt: failures, delayMs: backoffDelayMs(failures, policy) };
}
