/**
 * The runner lifecycle (kept from exo): Idle → Connecting → Connected → Loading → Loaded → WarmingUp →
 * Ready ⇄ Running → ShuttingDown → Shutdown, or Failed(reason, diagnostics) from anywhere. Pure statechart:
 * the runner child drives it with the outcome of each step and reports `statusOf(snapshot)` on change; an
 * event the current state does not accept is a protocol error the child refuses (`snapshot.can(event)`).
 */
import { assign, setup, type SnapshotFrom } from 'xstate';
import type { RunnerState, RunnerStatus } from '../../../protocols/runner-status.js';

export type LifecycleEvent =
  | { type: 'connect' }
  | { type: 'connected' }
  | { type: 'load'; totalLayers: number }
  | { type: 'progress'; layersLoaded: number }
  | { type: 'loaded' }
  | { type: 'warmup' }
  | { type: 'ready' }
  | { type: 'run' }
  | { type: 'taskDone' }
  | { type: 'shutdown' }
  | { type: 'stopped' }
  | { type: 'fail'; reason: string; diagnostics: readonly string[] };

export interface LifecycleContext {
  layersLoaded: number;
  totalLayers: number;
  /** Tasks running now: Running while > 0, back to Ready at 0. */
  active: number;
  reason: string;
  diagnostics: readonly string[];
}

export const runnerLifecycle = setup({
  types: {} as { context: LifecycleContext; events: LifecycleEvent },
  guards: {
    lastTask: ({ context }) => context.active <= 1,
  },
  actions: {
    recordFailure: assign(({ event }) =>
      event.type === 'fail' ? { reason: event.reason, diagnostics: event.diagnostics, active: 0 } : {},
    ),
  },
}).createMachine({
  id: 'runner',
  initial: 'Idle',
  context: { layersLoaded: 0, totalLayers: 0, active: 0, reason: '', diagnostics: [] },
  // Failure is accepted in every non-final state; final states (Shutdown, Failed) take no more events.
  on: { fail: { target: '.Failed', actions: 'recordFailure' } },
  states: {
    Idle: {
      on: {
        connect: 'Connecting',
        // A single runner may load without a group to join (exo allows LoadModel from Idle).
        load: {
          target: 'Loading',
          actions: assign(({ event }) => ({ totalLayers: event.totalLayers, layersLoaded: 0 })),
        },
        shutdown: 'ShuttingDown',
      },
    },
    Connecting: { on: { connected: 'Connected', shutdown: 'ShuttingDown' } },
    Connected: {
      on: {
        load: {
          target: 'Loading',
          actions: assign(({ event }) => ({ totalLayers: event.totalLayers, layersLoaded: 0 })),
        },
        shutdown: 'ShuttingDown',
      },
    },
    Loading: {
      on: {
        progress: {
          actions: assign(({ event, context }) => ({
            layersLoaded: Math.min(event.layersLoaded, context.totalLayers),
          })),
        },
        loaded: { target: 'Loaded', actions: assign(({ context }) => ({ layersLoaded: context.totalLayers })) },
        shutdown: 'ShuttingDown',
      },
    },
    Loaded: { on: { warmup: 'WarmingUp', shutdown: 'ShuttingDown' } },
    WarmingUp: { on: { ready: 'Ready', shutdown: 'ShuttingDown' } },
    Ready: {
      on: { run: { target: 'Running', actions: assign({ active: 1 }) }, shutdown: 'ShuttingDown' },
    },
    Running: {
      on: {
        run: { actions: assign(({ context }) => ({ active: context.active + 1 })) },
        taskDone: [
          { guard: 'lastTask', target: 'Ready', actions: assign({ active: 0 }) },
          { actions: assign(({ context }) => ({ active: context.active - 1 })) },
        ],
        shutdown: 'ShuttingDown',
      },
    },
    ShuttingDown: { on: { stopped: 'Shutdown' } },
    Shutdown: { type: 'final' },
    Failed: { type: 'final' },
  },
});

export type LifecycleSnapshot = SnapshotFrom<typeof runnerLifecycle>;

/** The status to report for a snapshot (what goes up to the supervisor and into cluster state). */
export function statusOf(snapshot: LifecycleSnapshot): RunnerStatus {
  const state = snapshot.value as RunnerState;
  const { context } = snapshot;
  if (state === 'Loading') return { state, layersLoaded: context.layersLoaded, totalLayers: context.totalLayers };
  if (state === 'Failed') return { state, reason: context.reason, diagnostics: context.diagnostics };
  return { state };
}

/** Equal statuses are not re-reported. */
export function sameStatus(a: RunnerStatus | undefined, b: RunnerStatus): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}
