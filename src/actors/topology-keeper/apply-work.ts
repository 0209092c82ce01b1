/**
 * Appliers for instances, runner statuses and tasks. Total and deterministic like the node appliers: facts about
 * unknown instances or tasks change nothing; creating an id that exists is idempotent (the first one wins).
 */
import type {
  InstanceCompleted,
  InstanceCreated,
  InstanceDeleted,
  InstanceFailed,
  InstanceNeedsReplacement,
  InstanceReplaced,
  RunnerStatusChanged,
  TaskCreated,
  TaskStatusChanged,
} from '../../protocols/events.js';
import {
  compact,
  own,
  withEntry,
  withoutEntry,
  type ClusterState,
  type InstanceRecord,
  type InstanceStatus,
} from './state.js';

type At = number | undefined;

export function applyInstanceCreated(state: ClusterState, e: InstanceCreated, at: At): ClusterState {
  if (own(state.instances, e.instance.id)) return state;
  const record: InstanceRecord = compact({
    plan: e.instance,
    workload: e.workload,
    minNodes: e.minNodes,
    requiredNodes: e.requiredNodes,
    objective: e.objective,
    pinned: e.pinned,
    status: 'active',
    generation: 1,
    runners: {},
    createdAt: at,
    updatedAt: at,
  });
  return { ...state, instances: withEntry(state.instances, e.instance.id, record) };
}

function withStatus(state: ClusterState, id: string, status: InstanceStatus, reason: string, at: At): ClusterState {
  const inst = own(state.instances, id);
  if (!inst) return state;
  return { ...state, instances: withEntry(state.instances, id, compact({ ...inst, status, reason, updatedAt: at })) };
}

export function applyInstanceNeedsReplacement(state: ClusterState, e: InstanceNeedsReplacement, at: At): ClusterState {
  return withStatus(state, e.instanceId, 'needs-replacement', e.reason, at);
}

/**
 * The first failure wins: later ranks stopped because of it, or late reports, do not rename the cause. One exception:
 * a `final` failure of a failed job waiting for its restart (the re-placement was refused) ends the wait — the job
 * stays failed with the failing rank's code, and the reason says why it does not restart (torchrun, when it cannot
 * restart, exits with the failure too).
 */
export function applyInstanceFailed(state: ClusterState, e: InstanceFailed, at: At): ClusterState {
  const inst = own(state.instances, e.instanceId);
  if (!inst || inst.status === 'completed') return state;
  if (inst.status === 'failed') {
    if (!e.final || inst.final) return state;
    return {
      ...state,
      instances: withEntry(
        state.instances,
        e.instanceId,
        compact({ ...inst, final: true, reason: e.reason, updatedAt: at }),
      ),
    };
  }
  return {
    ...state,
    instances: withEntry(
      state.instances,
      e.instanceId,
      compact({
        ...inst,
        status: 'failed',
        reason: e.reason,
        exitCode: e.exitCode,
        signal: e.signal,
        failedRank: e.rank,
        failedNode: e.nodeId,
        updatedAt: at,
        final: e.final || undefined,
      }),
    ),
  };
}

/** Only a live job completes (a failed one stays failed). */
export function applyInstanceCompleted(state: ClusterState, e: InstanceCompleted, at: At): ClusterState {
  const inst = own(state.instances, e.instanceId);
  if (inst?.status !== 'active') return state;
  return {
    ...state,
    instances: withEntry(
      state.instances,
      e.instanceId,
      compact({ ...inst, status: 'completed', reason: e.reason, exitCode: 0, updatedAt: at }),
    ),
  };
}

/** A new plan under the same id: active again, next generation, runner records start over. */
export function applyInstanceReplaced(state: ClusterState, e: InstanceReplaced, at: At): ClusterState {
  const inst = own(state.instances, e.instance.id);
  if (!inst) return state;
  const { exitCode: _c, signal: _s, failedRank: _r, failedNode: _n, final: _f, ...live } = inst;
  const record: InstanceRecord = compact({
    ...live,
    plan: e.instance,
    status: 'active',
    reason: e.reason,
    generation: inst.generation + 1,
    runners: {},
    updatedAt: at,
    restarts: e.restarts ?? inst.restarts,
  });
  return { ...state, instances: withEntry(state.instances, e.instance.id, record) };
}

/** Removes the instance and its tasks (state stays bounded; the events stream keeps the history). */
export function applyInstanceDeleted(state: ClusterState, e: InstanceDeleted): ClusterState {
  if (!own(state.instances, e.instanceId)) return state;
  const tasks = Object.fromEntries(Object.entries(state.tasks).filter(([, task]) => task.instanceId !== e.instanceId));
  return { ...state, instances: withoutEntry(state.instances, e.instanceId), tasks };
}

/** The end-of-life statuses a rank goes through after its command exited: they keep how it ended. */
const WINDING_DOWN: ReadonlySet<string> = new Set(['ShuttingDown', 'Shutdown']);

export function applyRunnerStatusChanged(state: ClusterState, e: RunnerStatusChanged, at: At): ClusterState {
  const inst = own(state.instances, e.instanceId);
  if (!inst?.plan.nodes.includes(e.nodeId)) return state;
  // A finished job's ranks shut down after their command exited: the exit stays on the record (the job's view shows
  // it per rank); a new attempt (Idle, Connecting, …) starts without it.
  const before = own(inst.runners, e.nodeId);
  const kept = WINDING_DOWN.has(e.status) && e.exitCode === undefined && e.signal === undefined ? before : undefined;
  const runner = compact({
    status: e.status,
    reason: e.reason,
    diagnostics: e.diagnostics,
    exitCode: e.exitCode ?? kept?.exitCode,
    signal: e.signal ?? kept?.signal,
    attempt: e.attempt,
    since: at,
  });
  return {
    ...state,
    instances: withEntry(state.instances, e.instanceId, {
      ...inst,
      runners: withEntry(inst.runners, e.nodeId, runner),
    }),
  };
}

export function applyTaskCreated(state: ClusterState, e: TaskCreated, at: At): ClusterState {
  if (own(state.tasks, e.taskId) || !own(state.instances, e.instanceId)) return state;
  const task = compact({
    id: e.taskId,
    instanceId: e.instanceId,
    kind: e.kind,
    params: e.params,
    timeoutMs: e.timeoutMs,
    status: 'pending' as const,
    createdAt: at,
    updatedAt: at,
  });
  return { ...state, tasks: withEntry(state.tasks, e.taskId, task) };
}

/** Sets the status; `result` and `error` describe the latest status only. */
export function applyTaskStatusChanged(state: ClusterState, e: TaskStatusChanged, at: At): ClusterState {
  const task = own(state.tasks, e.taskId);
  if (!task) return state;
  const { result: _r, error: _e, ...rest } = task;
  return {
    ...state,
    tasks: withEntry(
      state.tasks,
      e.taskId,
      compact({ ...rest, status: e.status, result: e.result, error: e.error, updatedAt: at }),
    ),
  };
}
