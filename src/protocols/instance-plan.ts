/** The placement's plan for one instance (which nodes, in rank order, hold which layers), its schema and rules. */
import { ValidationError } from './errors.js';
import { CLOSED, Count, Endpoint, Id, Ip, Port, W } from './event-fields.js';
import { canonical, compile, MapOf, StringEnum, Type, type Shape } from './schema-kit.js';
import { BACKENDS, SHARDINGS } from './placement-kinds.js';

export const Shard = Type.Object(
  {
    node: Id,
    rank: Count(),
    worldSize: Count(1),
    startLayer: Count(),
    endLayer: Count(),
  },
  CLOSED,
);
export type Shard = Shape<typeof Shard>;

/** The placement engineer's plan `instance` object, verbatim. */
export const InstancePlan = Type.Object(
  {
    id: Id,
    backend: StringEnum(BACKENDS),
    sharding: StringEnum(SHARDINGS),
    nodes: Type.Array(Id, { minItems: 1, maxItems: 1024, uniqueItems: true, description: 'rank order' }),
    shards: Type.Array(Shard, { maxItems: 1024 }),
    port: Port,
    hostsByNode: Type.Optional(MapOf(Type.Array(Endpoint, { maxItems: 1024 }), { maxProperties: 1024 })),
    jacclDevices: Type.Optional(
      Type.Array(
        Type.Array(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()]), { maxItems: 1024 }),
        { maxItems: 1024 },
      ),
    ),
    jacclCoordinators: Type.Optional(MapOf(Type.String({ minLength: 3, maxLength: 80 }), { maxProperties: 1024 })),
    meshAddresses: Type.Optional(
      MapOf(Ip, { maxProperties: 1024, description: 'per node, an address every other node reaches (torch)' }),
    ),
  },
  CLOSED,
);
export type InstancePlan = Shape<typeof InstancePlan>;

/** What the schema cannot say: nodes, shards, hosts and jaccl matrices agree in rank order. */
export function checkPlanRules(plan: InstancePlan, p: string): InstancePlan {
  const fail = (path: string, why: string): never => {
    throw new ValidationError(W, path, why);
  };
  const { nodes, shards } = plan;
  const n = nodes.length;
  if (shards.length !== n) fail(`${p}.shards`, 'one shard per node expected');
  shards.forEach((s, i) => {
    if (s.worldSize !== n) fail(`${p}.shards[${i}].worldSize`, `must be ${n}`);
    if (nodes[s.rank] !== s.node) fail(`${p}.shards[${i}]`, 'node does not match nodes[rank]');
    if (s.endLayer < s.startLayer) fail(`${p}.shards[${i}].endLayer`, 'before startLayer');
  });
  if (new Set(shards.map((s) => s.rank)).size !== n) fail(`${p}.shards`, 'duplicate rank');
  for (const field of ['hostsByNode', 'jacclCoordinators', 'meshAddresses'] as const) {
    for (const key of Object.keys(plan[field] ?? {}))
      if (!nodes.includes(key)) fail(`${p}.${field}.${key}`, 'not a node of the instance');
  }
  Object.entries(plan.hostsByNode ?? {}).forEach(([key, hosts]) => {
    if (hosts.length > n) fail(`${p}.hostsByNode.${key}`, `more than ${n} items`);
  });
  if (plan.jacclDevices) {
    if (plan.jacclDevices.length !== n) fail(`${p}.jacclDevices`, `must have ${n} rows`);
    plan.jacclDevices.forEach((row, i) => {
      if (row.length !== n) fail(`${p}.jacclDevices[${i}]`, `must have ${n} entries`);
    });
  }
  return plan;
}

const codec = compile(InstancePlan, W);
/** The plan alone (snapshots, supervisor state): schema, then the rank-order rules; a fresh canonical copy. */
export function decodeInstancePlan(v: unknown, p: string): InstancePlan {
  return checkPlanRules(canonical(codec.decode(v, p), W, p), p);
}
