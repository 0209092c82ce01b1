/**
 * Cluster commands: imperative requests sent to the leader, which turns them into events (events.ts).
 * `decodeCommand` checks strictly (unknown fields and types are refused) and throws only `ValidationError`
 * naming the JSON path.
 */
import { json } from '../core/topology/reader.js';
import { CLOSED, Count, Id, Reason, W } from './event-fields.js';
import { checkPlanRules, InstancePlan } from './instance-plan.js';
import { canonical, compile, JsonData, StringEnum, Type, type Shape } from './schema-kit.js';
import { withWorkloadDefaults, WorkloadSpec } from './workload-spec.js';

const commandId = Type.Optional(Id);

export const PlaceInstance = Type.Object({
  type: Type.Literal('PlaceInstance'), commandId, workload: WorkloadSpec,
  sharding: Type.Optional(StringEnum(['pipeline', 'tensor'])), backend: Type.Optional(StringEnum(['ring', 'jaccl'])),
  minNodes: Type.Optional(Count(1)), requiredNodes: Type.Optional(Type.Array(Id, { maxItems: 1024 })), instanceId: Type.Optional(Id),
}, CLOSED);
export const CreateInstance = Type.Object({ type: Type.Literal('CreateInstance'), commandId, instance: InstancePlan, workload: WorkloadSpec }, CLOSED);
export const DeleteInstance = Type.Object({ type: Type.Literal('DeleteInstance'), commandId, instanceId: Id, reason: Type.Optional(Reason) }, CLOSED);
export const ReplaceInstance = Type.Object({ type: Type.Literal('ReplaceInstance'), commandId, instanceId: Id, reason: Type.Optional(Reason) }, CLOSED);
export const SubmitTask = Type.Object({
  type: Type.Literal('SubmitTask'), commandId, taskId: Type.Optional(Id), instanceId: Id,
  kind: Type.String({ minLength: 1, maxLength: 64 }), params: Type.Optional(JsonData()), timeoutMs: Type.Optional(Count()),
}, CLOSED);
export const CancelTask = Type.Object({ type: Type.Literal('CancelTask'), commandId, taskId: Id, reason: Type.Optional(Reason) }, CLOSED);

export const Command = Type.Union([PlaceInstance, CreateInstance, DeleteInstance, ReplaceInstance, SubmitTask, CancelTask]);

type WithWorkload<T> = T extends { readonly workload: unknown } ? Omit<T, 'workload'> & { readonly workload: WorkloadSpec } : T;
export type PlaceInstance = WithWorkload<Shape<typeof PlaceInstance>>;
export type CreateInstance = WithWorkload<Shape<typeof CreateInstance>>;
export type DeleteInstance = Shape<typeof DeleteInstance>;
export type ReplaceInstance = Shape<typeof ReplaceInstance>;
export type SubmitTask = Shape<typeof SubmitTask>;
export type CancelTask = Shape<typeof CancelTask>;
export type Command = PlaceInstance | CreateInstance | DeleteInstance | ReplaceInstance | SubmitTask | CancelTask;
export type CommandType = Command['type'];

export const COMMAND_TYPES = ['PlaceInstance', 'CreateInstance', 'DeleteInstance', 'ReplaceInstance', 'SubmitTask',
  'CancelTask'] as const satisfies readonly CommandType[];

const codec = compile(Command, W, 'command');

/** Schema check, then what it cannot say: plan rules, workload defaults, JSON params bounds. */
export function decodeCommand(v: unknown): Command {
  const c = canonical(codec.decode(v), W, 'command');
  switch (c.type) {
    case 'PlaceInstance': return { ...c, workload: withWorkloadDefaults(c.workload) };
    case 'CreateInstance': return { ...c, instance: checkPlanRules(c.instance, 'command.instance'), workload: withWorkloadDefaults(c.workload) };
    case 'SubmitTask': return c.params === undefined ? c : { ...c, params: json(W, c.params, 'command.params') };
    default: return c;
  }
}
