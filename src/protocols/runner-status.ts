/** Runner and task statuses: the vocabulary shared by the runner child, its supervisor and cluster state. */
export const RUNNER_STATES = [
  'Idle',
  'Connecting',
  'Connected',
  'Loading',
  'Loaded',
  'WarmingUp',
  'Ready',
  'Running',
  'ShuttingDown',
  'Shutdown',
  'Failed',
] as const;
export type RunnerState = (typeof RUNNER_STATES)[number];

export type RunnerStatus =
  | { readonly state: Exclude<RunnerState, 'Loading' | 'Failed'> }
  | { readonly state: 'Loading'; readonly layersLoaded: number; readonly totalLayers: number }
  | { readonly state: 'Failed'; readonly reason: string; readonly diagnostics: readonly string[] };

export const TASK_STATUSES = ['pending', 'running', 'complete', 'failed', 'cancelled', 'timed_out'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TERMINAL_TASK_STATUSES: ReadonlySet<TaskStatus> = new Set<TaskStatus>([
  'complete',
  'failed',
  'cancelled',
  'timed_out',
]);

export function isTerminalTaskStatus(status: TaskStatus): boolean {
  return TERMINAL_TASK_STATUSES.has(status);
}

/** A one-line rendering for logs and CLI tables. */
export function formatRunnerStatus(status: RunnerStatus): string {
  if (status.state === 'Loading') return `Loading(${status.layersLoaded}/${status.totalLayers})`;
  if (status.state === 'Failed') return `Failed(${status.reason})`;
  return status.state;
}
