/** What an instance runs: the built-in ring collective or an external command (`exec`), with its sizes. */
import { ARTIFACT_ID_PATTERN } from './artifact-events.js';
import { CLOSED, Count, Id, W } from './event-fields.js';
import { canonical, compile, SAFE_KEY, StringEnum, Type, type Shape } from './schema-kit.js';

const base = {
  id: Id,
  memoryBytes: Count(),
  layers: Count(1),
  hiddenSize: Type.Optional(Count(1)),
  kvHeads: Type.Optional(Count(1)),
  supportsTensor: Type.Optional(Type.Boolean()),
  /** artifact ids (docs/artifacts.md) the workload needs on every node: placement prefers nodes holding them */
  artifacts: Type.Optional(Type.Array(Type.String({ pattern: ARTIFACT_ID_PATTERN.source }), { maxItems: 64 })),
};

export const RingWorkload = Type.Object({ kind: Type.Literal('ring'), ...base }, CLOSED);
export type RingWorkload = Shape<typeof RingWorkload>;

/** What happens when a job fails (torchrun's --max-restarts): `never`, or restart the whole group up to `max` times. */
export const RestartSpec = Type.Object({ policy: StringEnum(['never', 'on-failure']), max: Type.Optional(Count(0, 100)) }, CLOSED);
export type RestartSpec = { readonly policy: 'never' | 'on-failure'; readonly max: number };

export const ExecWorkload = Type.Object({
  kind: Type.Literal('exec'),
  ...base,
  restart: Type.Optional(RestartSpec),
  command: Type.String({ minLength: 1, maxLength: 4096 }),
  args: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 1024 })),
  env: Type.Optional(Type.Record(Type.String({ pattern: `${SAFE_KEY}[A-Za-z_][A-Za-z0-9_]{0,255}$` }), Type.String({ maxLength: 65536 }),
    { additionalProperties: false, maxProperties: 1024 })),
  cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
}, CLOSED);
/** Decoded, `restart.max` is always set (its default filled in). */
export type ExecWorkload = Omit<Shape<typeof ExecWorkload>, 'restart'> & { readonly restart?: RestartSpec };

export const WorkloadSpec = Type.Union([RingWorkload, ExecWorkload]);
export type WorkloadSpec = RingWorkload | ExecWorkload;

/** The one default the schema leaves to code: `restart.max` is 0 for `never`, 3 for `on-failure`. */
export function withWorkloadDefaults(w: Shape<typeof WorkloadSpec>): WorkloadSpec {
  if (w.kind !== 'exec' || !w.restart || w.restart.max !== undefined) return w as WorkloadSpec;
  return { ...w, restart: { policy: w.restart.policy, max: w.restart.policy === 'never' ? 0 : 3 } };
}

const codec = compile(WorkloadSpec, W);
export function decodeWorkloadSpec(v: unknown, p: string): WorkloadSpec {
  return withWorkloadDefaults(canonical(codec.decode(v, p), W, p));
}
