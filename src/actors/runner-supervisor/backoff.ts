/**
 * Restart policy for runners that exit unexpectedly: exponential backoff (0.5 s doubling, capped) and a
 * bounded number of attempts, then give up with a reason. Pure: the shell owns the clock and the timers.
 */
export interface RestartPolicy {
  readonly baseMs: number;
  readonly factor: number;
  readonly capMs: number;
  /** Restarts allowed; the failure after the last one gives up. */
  readonly maxAttempts: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { baseMs: 500, factor: 2, capMs: 10_000, maxAttempts: 5 };

/** Delay before restart number `attempt` (1-based): base · factor^(attempt−1), at most cap. */
export function backoffDelayMs(attempt: number, policy: RestartPolicy = DEFAULT_RESTART_POLICY): number {
  if (attempt < 1) return 0;
  return Math.min(policy.capMs, policy.baseMs * policy.factor ** (attempt - 1));
}

export type RestartDecision =
  | { readonly kind: 'restart'; readonly attempt: number; readonly delayMs: number }
  | { readonly kind: 'give-up'; readonly reason: string };

/** After the `failures`-th unexpected exit in a row (1-based), with `cause` like "signal=SIGKILL". */
export function restartDecision(
  failures: number,
  cause: string,
  policy: RestartPolicy = DEFAULT_RESTART_POLICY,
): RestartDecision {
  if (failures > policy.maxAttempts) {
    return { kind: 'give-up', reason: `gave up after ${policy.maxAttempts} restarts; last exit: ${cause}` };
  }
  return { kind: 'restart', attempt: failures, delayMs: backoffDelayMs(failures, policy) };
}

/** exo's KeyedBackoff with time as an input: may key `k` try again at `now`? */
export interface BackoffEntry {
  readonly attempts: number;
  readonly lastAt: number;
}
export function mayProceed(
  entry: BackoffEntry | undefined,
  now: number,
  policy: RestartPolicy = DEFAULT_RESTART_POLICY,
): boolean {
  if (!entry) return true;
  return now - entry.lastAt >= Math.min(policy.capMs, policy.baseMs * policy.factor ** entry.attempts);
}
export function recordAttempt(entry: BackoffEntry | undefined, now: number): BackoffEntry {
  return { attempts: (entry?.attempts ?? 0) + 1, lastAt: now };
}
