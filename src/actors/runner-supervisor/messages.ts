/**
 * Messages the runner supervisor accepts, strictly decoded (ValidationError on anything else):
 * - `{type:'event', indexed}` / `{type:'events', entries}`: applied log entries (the same messages the topology
 *   keeper takes, so whoever applies the log can fan them out to both);
 * - `{type:'cluster.event', event}`: one applied event without its index;
 * - `{type:'state', state}`: a whole state view to catch up from (the keeper's `state` answer's `state`);
 * - `{type:'stop'}`.
 */
import { ValidationError } from '../../core/errors.js';
import { decodeClusterEvent, decodeIndexedEvent, decodeInstancePlan, decodeWorkloadSpec, type IndexedEvent } from '../../protocols/events.js';
import type { SupervisorEvent } from './machine.js';
import type { StateView } from './reactions.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
function obj(v: unknown, path: string, keys: readonly string[], optional: readonly string[] = []): Obj {
  if (!isObj(v)) throw new ValidationError('event', path, 'expected an object');
  for (const k of Object.keys(v)) if (!keys.includes(k) && !optional.includes(k)) throw new ValidationError('event', `${path}.${k}`, 'unknown field');
  for (const k of keys) if (!Object.hasOwn(v, k)) throw new ValidationError('event', `${path}.${k}`, 'missing');
  return v;
}
const MAX_ENTRIES = 10_000;

function entries(list: unknown, path: string): IndexedEvent[] {
  if (!Array.isArray(list) || list.length > MAX_ENTRIES) throw new ValidationError('event', path, `expected an array of at most ${MAX_ENTRIES} entries`);
  return list.map((e, i) => decodeIndexedEvent(e, `${path}[${i}]`));
}

function str(v: unknown, path: string): string {
  if (typeof v !== 'string') throw new ValidationError('event', path, 'expected a string');
  return v;
}

/** The parts of the state view the supervisor uses; other fields of the keeper's state are ignored. */
export function decodeStateView(v: unknown, path = 'state'): StateView {
  if (!isObj(v) || !isObj(v.instances) || !isObj(v.tasks)) throw new ValidationError('event', path, 'expected {instances, tasks}');
  const instances: Record<string, StateView['instances'][string]> = {};
  for (const [id, rec] of Object.entries(v.instances)) {
    const p = `${path}.instances.${id}`;
    if (!isObj(rec) || !isObj(rec.runners)) throw new ValidationError('event', p, 'expected an instance record');
    const runners: Record<string, { status: string; reason?: string; diagnostics?: string[]; exitCode?: number }> = {};
    for (const [node, r] of Object.entries(rec.runners)) {
      if (!isObj(r)) throw new ValidationError('event', `${p}.runners.${node}`, 'expected a runner record');
      runners[node] = {
        status: str(r.status, `${p}.runners.${node}.status`),
        ...(typeof r.reason === 'string' ? { reason: r.reason } : {}),
        ...(Array.isArray(r.diagnostics) ? { diagnostics: r.diagnostics.filter((d): d is string => typeof d === 'string') } : {}),
        ...(typeof r.exitCode === 'number' && Number.isInteger(r.exitCode) ? { exitCode: r.exitCode } : {}),
      };
    }
    instances[id] = { plan: decodeInstancePlan(rec.plan, `${p}.plan`), workload: decodeWorkloadSpec(rec.workload, `${p}.workload`),
      status: str(rec.status, `${p}.status`), runners };
  }
  const tasks: Record<string, StateView['tasks'][string]> = {};
  for (const [id, t] of Object.entries(v.tasks)) {
    const p = `${path}.tasks.${id}`;
    if (!isObj(t)) throw new ValidationError('event', p, 'expected a task record');
    tasks[id] = {
      id: str(t.id, `${p}.id`), instanceId: str(t.instanceId, `${p}.instanceId`), kind: str(t.kind, `${p}.kind`), status: str(t.status, `${p}.status`),
      ...(t.params !== undefined ? { params: t.params as never } : {}), ...(typeof t.timeoutMs === 'number' ? { timeoutMs: t.timeoutMs } : {}),
    };
  }
  return { instances, tasks };
}

export function decodeSupervisorMessage(body: unknown): SupervisorEvent {
  const type = isObj(body) ? body.type : undefined;
  switch (type) {
    case 'event': {
      const e = decodeIndexedEvent(obj(body, 'body', ['type', 'indexed']).indexed, 'body.indexed');
      return { type: 'cluster.events', events: [e.event], lastIndex: e.index };
    }
    case 'events': {
      const list = entries(obj(body, 'body', ['type', 'entries']).entries, 'body.entries');
      return { type: 'cluster.events', events: list.map((e) => e.event), lastIndex: Math.max(0, ...list.map((e) => e.index)) };
    }
    case 'cluster.event':
      return { type: 'cluster.events', events: [decodeClusterEvent(obj(body, 'body', ['type', 'event']).event)] };
    case 'state': {
      const o = obj(body, 'body', ['type', 'state'], ['lastIndex']);
      return { type: 'cluster.state', state: decodeStateView(o.state), ...(typeof o.lastIndex === 'number' ? { lastIndex: o.lastIndex } : {}) };
    }
    case 'stop':
      obj(body, 'body', ['type']);
      return { type: 'stop' };
    default:
      throw new ValidationError('event', 'body.type', `unknown message type ${JSON.stringify(type)}`);
  }
}
