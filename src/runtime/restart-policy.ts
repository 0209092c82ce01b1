/**
 * One-for-one restart policy (pure): exponential backoff between restarts and a restart-intensity limit
 * (at most `maxRestarts` within `periodMs`; one more and the supervisor gives up and escalates to its parent).
 */
export interface RestartPolicy {
  readonly maxRestarts: number;
  readonly periodMs: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly factor: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  maxRestarts: 5,
  periodMs: 30_000,
  initialDelayMs: 100,
  maxDelayMs: 5_000,
  factor: 2,
};

export type RestartDecision =
  | {
      readonly action: 'restart';
      readonly delayMs: number;
      readonly attempt: number;
      readonly history: readonly number[];
    }
  | { readonly action: 'escalate'; readonly reason: string; readonly history: readonly number[] };

/**
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
  const delayMs = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** (attempt - 1));
  return { action: 'restart', delayMs, attempt, history: recent };
}
