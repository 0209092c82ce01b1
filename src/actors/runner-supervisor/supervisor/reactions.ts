/**
 * What this node's runners must do about an applied cluster event (or a whole state, at start-up): pure,
 * so the statechart can run it and emit the result as effects for the shell (the RunnerManager).
 */
import type { RunnerInstance } from '../../../protocols/runner-instance.js';
import type { RunnerStatus } from '../../../protocols/runner-status.js';
import type { ClusterEvent, InstancePlan, Json, WorkloadSpec } from '../../../protocols/events.js';
import type { StateView } from './state-view.js';

export interface KnownInstance {
  readonly plan: InstancePlan;
  readonly workload: WorkloadSpec;
}
export type Known = Readonly<Record<string, KnownInstance>>;

export type SupervisorEffect =
  | { readonly type: 'start'; readonly instance: RunnerInstance }
  | { readonly type: 'replace'; readonly instance: RunnerInstance }
  | { readonly type: 'stop'; readonly instanceId: string; readonly reason: string }
  | {
      readonly type: 'peer';
      readonly instanceId: string;
      readonly nodeId: string;
      readonly status: RunnerStatus;
      readonly exitCode?: number;
    }
  | {
      readonly type: 'task';
      readonly taskId: string;
      readonly instanceId: string;
      readonly kind: string;
      readonly params?: Json;
      readonly timeoutMs?: number;
    }
  | { readonly type: 'cancel'; readonly taskId: string };

export interface Reaction {
  readonly known: Known;
  readonly effects: readonly SupervisorEffect[];
}

export function toRunnerInstance(
  plan: InstancePlan,
  workload: WorkloadSpec,
  record?: { readonly restarts?: number },
): RunnerInstance {
  const base = {
    ...plan,
    ...(workload.artifacts?.length ? { artifacts: workload.artifacts } : {}),
    ...(workload.model ? { model: workload.model } : {}),
    ...(workload.logs ? { logs: workload.logs } : {}),
  };
  if (workload.kind === 'ring') return { ...base, workload: { kind: 'ring' } };
  return {
    ...base,
    ...(record?.restarts !== undefined ? { restarts: record.restarts } : {}),
    workload: {
      kind: 'exec',
      command: [workload.command, ...(workload.args ?? [])],
      ...(workload.restart ? { maxRestarts: workload.restart.max } : {}),
      ...(workload.cwd ? { cwd: workload.cwd } : {}),
      ...(workload.env ? { env: workload.env } : {}),
    },
  };
}

/** Cluster state carries only the state name; the rest of a status is rebuilt from the record. */
export function statusFromRecord(status: string, reason?: string, diagnostics?: readonly string[]): RunnerStatus {
  if (status === 'Failed') return { state: 'Failed', reason: reason ?? 'failed', diagnostics: diagnostics ?? [] };
  if (status === 'Loading') return { state: 'Loading', layersLoaded: 0, totalLayers: 0 };
  return { state: status } as RunnerStatus;
}

const hosts = (plan: InstancePlan, nodeId: string): boolean => plan.nodes.includes(nodeId);

/** Key-order-independent JSON, so the same plan decoded twice compares equal (a spurious difference would restart runners). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

export function reactToEvent(nodeId: string, known: Known, event: ClusterEvent): Reaction {
  switch (event.type) {
    case 'InstanceCreated': {
      const next = { ...known, [event.instance.id]: { plan: event.instance, workload: event.workload } };
      const effects: SupervisorEffect[] = hosts(event.instance, nodeId)
        ? [{ type: 'start', instance: toRunnerInstance(event.instance, event.workload) }]
        : [];
      return { known: next, effects };
    }
    case 'InstanceReplaced': {
      const old = known[event.instance.id];
      if (!old) return { known, effects: [] };
      const next = { ...known, [event.instance.id]: { plan: event.instance, workload: old.workload } };
      if (hosts(event.instance, nodeId))
        return {
          known: next,
          effects: [
            {
              type: 'replace',
              instance: toRunnerInstance(
                event.instance,
                old.workload,
                event.restarts !== undefined ? { restarts: event.restarts } : undefined,
              ),
            },
          ],
        };
      return {
        known: next,
        effects: hosts(old.plan, nodeId)
          ? [{ type: 'stop', instanceId: event.instance.id, reason: `re-placed: ${event.reason}` }]
          : [],
      };
    }
    case 'InstanceDeleted':
    case 'InstanceFailed':
    case 'InstanceCompleted':
    case 'InstanceNeedsReplacement': {
      const old = known[event.instanceId];
      if (!old) return { known, effects: [] };
      let next = known;
      if (event.type === 'InstanceDeleted') {
        const { [event.instanceId]: _gone, ...rest } = known;
        next = rest;
      }
      const why =
        event.type === 'InstanceDeleted'
          ? 'deleted'
          : event.type === 'InstanceFailed'
            ? 'failed'
            : event.type === 'InstanceCompleted'
              ? 'completed'
              : 'needs re-placement';
      return {
        known: next,
        effects: hosts(old.plan, nodeId)
          ? [{ type: 'stop', instanceId: event.instanceId, reason: `${why}: ${event.reason}` }]
          : [],
      };
    }
    case 'RunnerStatusChanged': {
      // Only the nodes that run a rank of the instance act on its siblings' statuses.
      const inst = known[event.instanceId];
      if (event.nodeId === nodeId || !inst || !hosts(inst.plan, nodeId)) return { known, effects: [] };
      return {
        known,
        effects: [
          {
            type: 'peer',
            instanceId: event.instanceId,
            nodeId: event.nodeId,
            status: statusFromRecord(event.status, event.reason, event.diagnostics),
            ...(event.exitCode !== undefined ? { exitCode: event.exitCode } : {}),
          },
        ],
      };
    }
    case 'TaskCreated': {
      const inst = known[event.instanceId];
      if (!inst || !hosts(inst.plan, nodeId)) return { known, effects: [] };
      return {
        known,
        effects: [
          {
            type: 'task',
            taskId: event.taskId,
            instanceId: event.instanceId,
            kind: event.kind,
            ...(event.params !== undefined ? { params: event.params } : {}),
            ...(event.timeoutMs !== undefined ? { timeoutMs: event.timeoutMs } : {}),
          },
        ],
      };
    }
    case 'TaskStatusChanged':
      return { known, effects: event.status === 'cancelled' ? [{ type: 'cancel', taskId: event.taskId }] : [] };
    default:
      return { known, effects: [] };
  }
}

/**
 * Catch up with a whole state: stop what no longer runs here (deleted while we were behind), start what
 * should, learn peers' statuses, pick up live tasks.
 */
export function reactToState(nodeId: string, known: Known, state: StateView, newer = true): Reaction {
  const next: Record<string, KnownInstance> = {};
  const effects: SupervisorEffect[] = [];
  // Only a state newer than what was already applied may stop runners (an older one just lacks recent news).
  for (const [id, old] of Object.entries(newer ? known : {})) {
    const now = state.instances[id];
    if (!hosts(old.plan, nodeId)) continue;
    if (!now) effects.push({ type: 'stop', instanceId: id, reason: 'no longer in the cluster state' });
    else if (now.status !== 'active' || !hosts(now.plan, nodeId))
      effects.push({ type: 'stop', instanceId: id, reason: `instance ${now.status}` });
    else if (canonical(now.plan) !== canonical(old.plan))
      effects.push({ type: 'stop', instanceId: id, reason: 're-placed' });
  }
  if (!newer) Object.assign(next, known);
  for (const [id, rec] of Object.entries(state.instances)) {
    if (!newer && known[id]) continue;
    next[id] = { plan: rec.plan, workload: rec.workload };
    if (rec.status !== 'active' || !hosts(rec.plan, nodeId)) continue;
    effects.push({ type: 'start', instance: toRunnerInstance(rec.plan, rec.workload) });
    for (const [node, r] of Object.entries(rec.runners)) {
      if (node !== nodeId)
        effects.push({
          type: 'peer',
          instanceId: id,
          nodeId: node,
          status: statusFromRecord(r.status, r.reason, r.diagnostics),
          ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
        });
    }
  }
  for (const task of Object.values(state.tasks)) {
    const inst = next[task.instanceId];
    if (!inst || !hosts(inst.plan, nodeId)) continue;
    if (task.status === 'cancelled') effects.push({ type: 'cancel', taskId: task.id });
    if (task.status === 'pending' || task.status === 'running') {
      effects.push({
        type: 'task',
        taskId: task.id,
        instanceId: task.instanceId,
        kind: task.kind,
        ...(task.params !== undefined ? { params: task.params } : {}),
        ...(task.timeoutMs !== undefined ? { timeoutMs: task.timeoutMs } : {}),
      });
    }
  }
  return { known: next, effects };
}
