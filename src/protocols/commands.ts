/**
 * Cluster commands: imperative requests sent to the leader, which turns them into events (events.ts).
 * `decodeCommand` checks strictly (unknown fields and types are refused) and throws only `ValidationError`
 * naming the JSON path.
 */
import { arr, guarded, id, json, obj, oneOf, opt, str, type Json } from '../core/topology/reader.js';
import { compact, nodeId, optInt, reason, typeField, W, type Fields, type InstanceId, type NodeId, type TaskId } from './event-fields.js';
import { decodeInstancePlan, type InstancePlan } from './instance-plan.js';
import { decodeWorkloadSpec, type WorkloadSpec } from './workload-spec.js';

export interface PlaceInstance {
  readonly type: 'PlaceInstance'; readonly commandId?: string; readonly workload: WorkloadSpec;
  readonly sharding?: 'pipeline' | 'tensor'; readonly backend?: 'ring' | 'jaccl';
  readonly minNodes?: number; readonly requiredNodes?: readonly NodeId[]; readonly instanceId?: InstanceId;
}
export interface CreateInstance { readonly type: 'CreateInstance'; readonly commandId?: string; readonly instance: InstancePlan; readonly workload: WorkloadSpec }
export interface DeleteInstance { readonly type: 'DeleteInstance'; readonly commandId?: string; readonly instanceId: InstanceId; readonly reason?: string }
export interface ReplaceInstance { readonly type: 'ReplaceInstance'; readonly commandId?: string; readonly instanceId: InstanceId; readonly reason?: string }
export interface SubmitTask {
  readonly type: 'SubmitTask'; readonly commandId?: string; readonly taskId?: TaskId; readonly instanceId: InstanceId;
  readonly kind: string; readonly params?: Json; readonly timeoutMs?: number;
}
export interface CancelTask { readonly type: 'CancelTask'; readonly commandId?: string; readonly taskId: TaskId; readonly reason?: string }

export type Command = PlaceInstance | CreateInstance | DeleteInstance | ReplaceInstance | SubmitTask | CancelTask;
export type CommandType = Command['type'];

export const COMMAND_TYPES = ['PlaceInstance', 'CreateInstance', 'DeleteInstance', 'ReplaceInstance', 'SubmitTask',
  'CancelTask'] as const satisfies readonly CommandType[];

const cid = (o: Fields, p: string) => opt(o.commandId, (x) => id(W, x, `${p}.commandId`));
const optReason = (o: Fields, p: string) => opt(o.reason, (x) => reason(x, `${p}.reason`));
const COMMAND_DECODERS: { readonly [K in CommandType]: readonly [readonly string[], readonly string[], (o: Fields, p: string) => Extract<Command, { type: K }>] } = {
  PlaceInstance: [['workload'], ['commandId', 'sharding', 'backend', 'minNodes', 'requiredNodes', 'instanceId'], (o, p) => compact({
    type: 'PlaceInstance', commandId: cid(o, p), workload: decodeWorkloadSpec(o.workload, `${p}.workload`),
    sharding: opt(o.sharding, (x) => oneOf(W, x, `${p}.sharding`, ['pipeline', 'tensor'] as const)),
    backend: opt(o.backend, (x) => oneOf(W, x, `${p}.backend`, ['ring', 'jaccl'] as const)),
    minNodes: optInt(o.minNodes, `${p}.minNodes`, 1), requiredNodes: opt(o.requiredNodes, (x) => arr(W, x, `${p}.requiredNodes`, nodeId, 1024)),
    instanceId: opt(o.instanceId, (x) => id(W, x, `${p}.instanceId`)),
  })],
  CreateInstance: [['instance', 'workload'], ['commandId'], (o, p) => compact({
    type: 'CreateInstance', commandId: cid(o, p), instance: decodeInstancePlan(o.instance, `${p}.instance`), workload: decodeWorkloadSpec(o.workload, `${p}.workload`),
  })],
  DeleteInstance: [['instanceId'], ['commandId', 'reason'], (o, p) => compact({ type: 'DeleteInstance', commandId: cid(o, p), instanceId: id(W, o.instanceId, `${p}.instanceId`), reason: optReason(o, p) })],
  ReplaceInstance: [['instanceId'], ['commandId', 'reason'], (o, p) => compact({ type: 'ReplaceInstance', commandId: cid(o, p), instanceId: id(W, o.instanceId, `${p}.instanceId`), reason: optReason(o, p) })],
  SubmitTask: [['instanceId', 'kind'], ['commandId', 'taskId', 'params', 'timeoutMs'], (o, p) => compact({
    type: 'SubmitTask', commandId: cid(o, p), taskId: opt(o.taskId, (x) => id(W, x, `${p}.taskId`)), instanceId: id(W, o.instanceId, `${p}.instanceId`),
    kind: str(W, o.kind, `${p}.kind`, { min: 1, max: 64 }), params: opt(o.params, (x) => json(W, x, `${p}.params`)), timeoutMs: optInt(o.timeoutMs, `${p}.timeoutMs`),
  })],
  CancelTask: [['taskId'], ['commandId', 'reason'], (o, p) => compact({ type: 'CancelTask', commandId: cid(o, p), taskId: id(W, o.taskId, `${p}.taskId`), reason: optReason(o, p) })],
};

export function decodeCommand(v: unknown): Command {
  return guarded(W, () => {
    const type = oneOf(W, typeField(v, 'command'), 'command.type', COMMAND_TYPES);
    const [required, optional, build] = COMMAND_DECODERS[type];
    return build(obj(W, v, 'command', ['type', ...required], optional), 'command');
  });
}
