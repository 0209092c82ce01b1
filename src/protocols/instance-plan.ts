/** The placement's plan for one instance (which nodes, in rank order, hold which layers) and its decoder. */
import { arr, fail, id, int, obj, oneOf, opt, record, str } from '../core/topology/reader.js';
import { compact, endpoint, MAX_PORT, nodeId, W, type Endpoint, type InstanceId, type NodeId } from './event-fields.js';

/** The placement engineer's plan `instance` object (issue 5), verbatim. */
export interface Shard {
  readonly node: NodeId;
  readonly rank: number;
  readonly worldSize: number;
  readonly startLayer: number;
  readonly endLayer: number;
}
export interface InstancePlan {
  readonly id: InstanceId;
  readonly backend: 'ring' | 'jaccl';
  readonly sharding: 'pipeline' | 'tensor';
  /** rank order */
  readonly nodes: readonly NodeId[];
  readonly shards: readonly Shard[];
  readonly port: number;
  readonly hostsByNode?: Readonly<Record<NodeId, readonly Endpoint[]>>;
  readonly jacclDevices?: readonly (readonly (string | null)[])[];
  readonly jacclCoordinators?: Readonly<Record<NodeId, string>>;
}

function shard(v: unknown, p: string): Shard {
  const o = obj(W, v, p, ['node', 'rank', 'worldSize', 'startLayer', 'endLayer']);
  return {
    node: nodeId(o.node, `${p}.node`), rank: int(W, o.rank, `${p}.rank`), worldSize: int(W, o.worldSize, `${p}.worldSize`, 1),
    startLayer: int(W, o.startLayer, `${p}.startLayer`), endLayer: int(W, o.endLayer, `${p}.endLayer`),
  };
}

/** The plan's instance object; also checks that nodes, shards, hosts and jaccl matrices agree in rank order. */
export function decodeInstancePlan(v: unknown, p: string): InstancePlan {
  const o = obj(W, v, p, ['id', 'backend', 'sharding', 'nodes', 'shards', 'port'], ['hostsByNode', 'jacclDevices', 'jacclCoordinators']);
  const nodes = arr(W, o.nodes, `${p}.nodes`, nodeId, 1024);
  const n = nodes.length;
  if (n === 0) fail(W, `${p}.nodes`, 'empty');
  if (new Set(nodes).size !== n) fail(W, `${p}.nodes`, 'duplicate node');
  const shards = arr(W, o.shards, `${p}.shards`, shard, 1024);
  if (shards.length !== n) fail(W, `${p}.shards`, 'one shard per node expected');
  shards.forEach((s, i) => {
    if (s.worldSize !== n) fail(W, `${p}.shards[${i}].worldSize`, `must be ${n}`);
    if (nodes[s.rank] !== s.node) fail(W, `${p}.shards[${i}]`, 'node does not match nodes[rank]');
    if (s.endLayer < s.startLayer) fail(W, `${p}.shards[${i}].endLayer`, 'before startLayer');
  });
  if (new Set(shards.map((s) => s.rank)).size !== n) fail(W, `${p}.shards`, 'duplicate rank');
  const member = (k: string, q: string): string => {
    if (!nodes.includes(nodeId(k, q))) fail(W, q, 'not a node of the instance');
    return k;
  };
  const devicesRow = (x: unknown, q: string): (string | null)[] => {
    const row = arr(W, x, q, (y, r) => (y === null ? null : str(W, y, r, { min: 1, max: 64 })), n);
    if (row.length !== n) fail(W, q, `must have ${n} entries`);
    return row;
  };
  return compact({
    id: id(W, o.id, `${p}.id`), backend: oneOf(W, o.backend, `${p}.backend`, ['ring', 'jaccl'] as const),
    sharding: oneOf(W, o.sharding, `${p}.sharding`, ['pipeline', 'tensor'] as const), nodes, shards,
    port: int(W, o.port, `${p}.port`, 0, MAX_PORT),
    hostsByNode: opt(o.hostsByNode, (x) => record(W, x, `${p}.hostsByNode`, member, (y, q) => arr(W, y, q, endpoint, n), n)),
    jacclDevices: opt(o.jacclDevices, (x) => {
      const rows = arr(W, x, `${p}.jacclDevices`, devicesRow, n);
      if (rows.length !== n) fail(W, `${p}.jacclDevices`, `must have ${n} rows`);
      return rows;
    }),
    jacclCoordinators: opt(o.jacclCoordinators, (x) => record(W, x, `${p}.jacclCoordinators`, member, (y, q) => str(W, y, q, { min: 3, max: 80 }), n)),
  });
}
