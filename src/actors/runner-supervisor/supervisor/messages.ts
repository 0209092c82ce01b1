/**
 * Messages the runner supervisor accepts, one TypeBox schema each (ValidationError on anything else):
 * - `{type:'event', indexed}` / `{type:'events', entries}`: applied log entries, followed by index (machine.ts);
 * - `{type:'cluster.event', event}`: one applied event without its index;
 * - `{type:'state', state, lastIndex?}`: a whole state view to catch up from (the keeper's `state` answer's `state`);
 * - `{type:'state-replaced'}`: the applied state was replaced (a snapshot installed): read it again;
 * - `{type:'stop'}`.
 * Events are checked by the schemas they embed, then given the rules after the check (events.ts `finish*`).
 */
import { ClusterEvent, finishClusterEvent, finishIndexedEvent, IndexedEvent } from '../../../protocols/events.js';
import { Count, Id } from '../../../protocols/event-fields.js';
import { checkPlanRules, InstancePlan } from '../../../protocols/instance-plan.js';
import {
  canonical,
  compile,
  JsonData,
  sameShape,
  Type,
  type Shape,
  type TSchema,
} from '../../../protocols/schema-kit.js';
import { withWorkloadDefaults, WorkloadSpec } from '../../../protocols/workload-spec.js';
import type { SupervisorEvent } from './machine.js';
import type { StateView } from './reactions.js';

const W = 'event';
const CLOSED = { additionalProperties: false } as const;
const MAX_ENTRIES = 10_000;
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
/** Decoded, a workload has its defaults (`restart.max`): reactions.ts's `StateView` is exactly that. */
type DecodedView = {
  readonly instances: {
    readonly [id: string]: Omit<Shape<typeof InstanceView>, 'workload'> & { readonly workload: WorkloadSpec };
  };
  readonly tasks: Shape<typeof StateViewSchema>['tasks'];
};
sameShape<DecodedView, StateView>();

const message = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P) =>
  Type.Object({ type: Type.Literal(type), ...properties }, CLOSED);
export const SupervisorMessages = {
  event: message('event', { indexed: IndexedEvent }),
  events: message('events', { entries: Type.Array(IndexedEvent, { maxItems: MAX_ENTRIES }) }),
  'cluster.event': message('cluster.event', { event: ClusterEvent }),
  state: message('state', { state: StateViewSchema, lastIndex: Type.Optional(Count()) }),
  'state-replaced': message('state-replaced', {}),
  stop: message('stop', {}),
};
export const SupervisorMessage = Type.Union(Object.values(SupervisorMessages) as TSchema[] as [TSchema]);
export type SupervisorMessage = {
  [K in keyof typeof SupervisorMessages]: Shape<(typeof SupervisorMessages)[K]>;
}[keyof typeof SupervisorMessages];

const messageCodec = compile(SupervisorMessage, W, 'body');
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

export function decodeSupervisorMessage(body: unknown): SupervisorEvent {
  const m = messageCodec.decode(body) as SupervisorMessage;
  switch (m.type) {
    case 'event': {
      const e = finishIndexedEvent(m.indexed, 'body.indexed');
      return { type: 'cluster.events', events: [e.event], lastIndex: e.index, indices: [e.index] };
    }
    case 'events': {
      const list = m.entries.map((e, i) => finishIndexedEvent(e, `body.entries[${i}]`));
      return {
        type: 'cluster.events',
        events: list.map((e) => e.event),
        lastIndex: Math.max(0, ...list.map((e) => e.index)),
        indices: list.map((e) => e.index),
      };
    }
    case 'cluster.event':
      return { type: 'cluster.events', events: [finishClusterEvent(m.event, 'body.event')] };
    case 'state':
      return {
        type: 'cluster.state',
        state: view(m.state, 'body.state'),
        ...(m.lastIndex !== undefined ? { lastIndex: m.lastIndex } : {}),
      };
    case 'state-replaced':
      return { type: 'cluster.replaced' };
    case 'stop':
      return { type: 'stop' };
  }
}
