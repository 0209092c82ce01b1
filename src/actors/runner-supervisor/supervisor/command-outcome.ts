/**
 * How an exec runner's command ended, as the reason and exit code on the runner's next status. The command is
 * a local task of the runner (not a cluster task), so without this its exit would only be in the runner's log.
 */
import type { TaskStatus } from '../../../protocols/events.js';

export interface CommandOutcome {
  readonly reason: string;
  readonly exitCode?: number;
  readonly signal?: string;
}

const seconds = (ms: unknown): string =>
  typeof ms === 'number' && Number.isFinite(ms) ? ` after ${(ms / 1000).toFixed(1)} s` : '';

/** `result` is the exec workload's `{exitCode, signal, durationMs}`; `error` a failed or cancelled command's message. */
export function commandOutcome(
  status: TaskStatus,
  result: unknown,
  error: string | undefined,
): CommandOutcome | undefined {
  if (status === 'complete') {
    const r = (typeof result === 'object' && result !== null ? result : {}) as {
      exitCode?: unknown;
      durationMs?: unknown;
    };
    const exitCode = typeof r.exitCode === 'number' ? r.exitCode : 0;
    return { reason: `command exited with code ${exitCode}${seconds(r.durationMs)}`, exitCode };
  }
  if (status === 'failed' || status === 'cancelled' || status === 'timed_out') {
    const message = error ?? status;
    const code = /exited with code (\d+)/.exec(message)?.[1];
    const signal = /exited with signal (\w+)/.exec(message)?.[1];
    return {
      reason: `command ${status === 'failed' ? 'failed' : status}: ${message}`.slice(0, 500),
      ...(code !== undefined ? { exitCode: Number(code) } : {}),
      ...(signal !== undefined ? { signal } : {}),
    };
  }
  return undefined;
}
