/**
 * Cluster commands: imperative requests sent to the leader, which turns them into events (events.ts).
 * `decodeCommand` checks strictly (unknown fields and types are refused) and throws only `ValidationError`
 * naming the JSON path.
 */
import { boundedJson } from './bounded-json.js';
import { CLOSED, Count, Id, IdField, Reason, W } from './event-fields.js';
import { checkPlanRules, InstancePlan } from './instance-plan.js';
import { canonical, compile, JsonData, StringEnum, Type, type Shape } from './schema-kit.js';
import { withWorkloadDefaults, WorkloadSpec } from './workload-spec.js';
import { BACKENDS, SHARDINGS } from './placement-kinds.js';

const commandId = Type.Optional(Id);

/** How to place a workload: the `plan` command's request and the API's placement bodies share these fields. */
export const placementFields = {
  sharding: Type.Optional(StringEnum(SHARDINGS, { description: 'default pipeline' })),
  backend: Type.Optional(StringEnum(BACKENDS, { description: 'default ring' })),
  minNodes: Type.Optional(Count(1, 4096)),
  requiredNodes: Type.Optional(
    Type.Array(IdField('a node id'), { maxItems: 4096, description: 'nodes the placement must use' }),
  ),
  objective: Type.Optional(
    StringEnum(['latency', 'throughput'], {
      description: 'what the predicted choice optimises: step time (default) or pipelined tokens/s',
    }),
  ),
  nodes: Type.Optional(
    Type.Array(IdField('a node id'), {
      minItems: 1,
      maxItems: 1024,
      uniqueItems: true,
      description:
        'pin the placement: exactly these nodes, in this ring (rank) order. The planner checks the set (memory, ' +
        'sharding and backend, links), splits the layers, picks the addresses and predicts it, or refuses with the ' +
        'reason; a pinned instance is never moved to other nodes. Not with minNodes or requiredNodes',
    }),
  ),
};
export const chosenInstanceId = Type.Optional(IdField('choose the id (default: the leader picks one)'));

export const PlaceInstance = Type.Object(
  {
    type: Type.Literal('PlaceInstance'),
    commandId,
    workload: WorkloadSpec,
    ...placementFields,
    instanceId: chosenInstanceId,
  },
  CLOSED,
);
export const CreateInstance = Type.Object(
  { type: Type.Literal('CreateInstance'), commandId, instance: InstancePlan, workload: WorkloadSpec },
  CLOSED,
);
export const DeleteInstance = Type.Object(
  { type: Type.Literal('DeleteInstance'), commandId, instanceId: Id, reason: Type.Optional(Reason) },
  CLOSED,
);
export const ReplaceInstance = Type.Object(
  { type: Type.Literal('ReplaceInstance'), commandId, instanceId: Id, reason: Type.Optional(Reason) },
  CLOSED,
);
export const SubmitTask = Type.Object(
  {
    type: Type.Literal('SubmitTask'),
    commandId,
    taskId: Type.Optional(Id),
    instanceId: Id,
    kind: Type.String({ minLength: 1, maxLength: 64 }),
    params: Type.Optional(JsonData()),
    timeoutMs: Type.Optional(Count()),
  },
  CLOSED,
);
export const CancelTask = Type.Object(
  { type: Type.Literal('CancelTask'), commandId, taskId: Id, reason: Type.Optional(Reason) },
  CLOSED,
);

export const Command = Type.Union([
  PlaceInstance,
  CreateInstance,
  DeleteInstance,
  ReplaceInstance,
  SubmitTask,
  CancelTask,
]);

type WithWorkload<T> = T extends { readonly workload: unknown }
  ? Omit<T, 'workload'> & { readonly workload: WorkloadSpec }
  : T;
export type PlaceInstance = WithWorkload<Shape<typeof PlaceInstance>>;
export type CreateInstance = WithWorkload<Shape<typeof CreateInstance>>;
export type DeleteInstance = Shape<typeof DeleteInstance>;
export type ReplaceInstance = Shape<typeof ReplaceInstance>;
export type SubmitTask = Shape<typeof SubmitTask>;
export type CancelTask = Shape<typeof CancelTask>;
export type Command = PlaceInstance | CreateInstance | DeleteInstance | ReplaceInstance | SubmitTask | CancelTask;
export type CommandType = Command['type'];

export const COMMAND_TYPES = [
  'PlaceInstance',
  'CreateInstance',
  'DeleteInstance',
  'ReplaceInstance',
  'SubmitTask',
  'CancelTask',
] as const satisfies readonly CommandType[];

const codec = compile(Command, W, 'command');

/** Schema check, then what it cannot say: plan rules, workload defaults, JSON params bounds. */
export function decodeCommand(v: unknown): Command {
  const c = canonical(codec.decode(v), W, 'command');
  switch (c.type) {
    case 'PlaceInstance':
      return { ...c, workload: withWorkloadDefaults(c.workload) };
    case 'CreateInstance':
      return {
        ...c,
        instance: checkPlanRules(c.instance, 'command.instance'),
        workload: withWorkloadDefaults(c.workload),
      };
    case 'SubmitTask':
      return c.params === undefined ? c : { ...c, params: boundedJson(W, c.params, 'command.params') };
    default:
      return c;
  }
}
