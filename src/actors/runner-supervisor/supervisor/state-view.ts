/**
 * The parts of the replicated state the supervisor reads (the topology keeper's `state` answer, or a `state`
 * message): one TypeBox schema, and `StateView` is what it decodes to, with plans and workloads given their rules.
 */
import { Count, Id } from '../../../protocols/event-fields.js';
import { checkPlanRules, InstancePlan } from '../../../protocols/instance-plan.js';
import { canonical, compile, JsonData, Type, type Shape, type TSchema } from '../../../protocols/schema-kit.js';
import { withWorkloadDefaults, WorkloadSpec } from '../../../protocols/workload-spec.js';

const W = 'event';
const Text = Type.String({ maxLength: 4096 });

// The parts of the keeper's state the supervisor uses: open objects, the keeper's other fields are ignored.
// Maps are `Type.Record`s: a `MapOf` inside a `MapOf` compiles wrongly in TypeBox 0.34 (snapshot-schema.ts says why).
const Keyed = <V extends TSchema>(value: V) => Type.Record(Type.String(), value);
const RunnerView = Type.Object({
  status: Type.String({ maxLength: 64 }),
  reason: Type.Optional(Text),
  diagnostics: Type.Optional(Type.Array(Text, { maxItems: 200 })),
  exitCode: Type.Optional(Type.Integer()),
});
const InstanceView = Type.Object({
  plan: InstancePlan,
  workload: WorkloadSpec,
  status: Type.String({ maxLength: 64 }),
  runners: Keyed(RunnerView),
});
const TaskView = Type.Object({
  id: Id,
  instanceId: Id,
  kind: Type.String({ maxLength: 64 }),
  status: Type.String({ maxLength: 64 }),
  params: Type.Optional(JsonData()),
  timeoutMs: Type.Optional(Count()),
});
export const StateViewSchema = Type.Object({ instances: Keyed(InstanceView), tasks: Keyed(TaskView) });
/** Decoded: the schema's shape, with a workload's defaults filled in (`restart.max`). */
export type StateView = {
  readonly instances: {
    readonly [id: string]: Omit<Shape<typeof InstanceView>, 'workload'> & { readonly workload: WorkloadSpec };
  };
  readonly tasks: Shape<typeof StateViewSchema>['tasks'];
};

const stateCodec = compile(StateViewSchema, W);

/** Only the fields the supervisor uses, copied; plans and workloads get the rules after their check. */
function view(v: Shape<typeof StateViewSchema>, path: string): StateView {
  const pick = <T extends object, K extends keyof T>(o: T, keys: readonly K[]): Pick<T, K> =>
    Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]])) as Pick<T, K>;
  const instances = Object.fromEntries(
    Object.entries(v.instances).map(([id, rec]) => {
      const p = `${path}.instances.${id}`;
      return [
        id,
        {
          plan: checkPlanRules(canonical(rec.plan, W, `${p}.plan`), `${p}.plan`),
          workload: withWorkloadDefaults(canonical(rec.workload, W, `${p}.workload`)),
          status: rec.status,
          runners: Object.fromEntries(
            Object.entries(rec.runners).map(([node, r]) => [
              node,
              canonical(pick(r, ['status', 'reason', 'diagnostics', 'exitCode']), W, `${p}.runners.${node}`),
            ]),
          ),
        },
      ];
    }),
  );
  const tasks = Object.fromEntries(
    Object.entries(v.tasks).map(([id, t]) => [
      id,
      canonical(pick(t, ['id', 'instanceId', 'kind', 'status', 'params', 'timeoutMs']), W, `${path}.tasks.${id}`),
    ]),
  );
  return { instances, tasks };
}

/** The state view alone (the keeper's `state` answer); `path` names it in errors. */
export function decodeStateView(v: unknown, path = 'state'): StateView {
  return view(stateCodec.decode(v, path), path);
}
