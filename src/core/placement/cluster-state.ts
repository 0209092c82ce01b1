import { Reader, type InputWhere } from './decode-helpers.js';

/**
 * The cluster state the planner reads (the `--state` file of `torus plan`, or the live topology turned into
 * this shape). Memory is in bytes; `bandwidthBps` is bits per second, as iperf3 and the profiler report it.
 */
export const INTERFACE_TYPES = ['thunderbolt', 'maybe_ethernet', 'ethernet', 'wifi', 'unknown'] as const;
export type InterfaceType = (typeof INTERFACE_TYPES)[number];

export interface NodeInterface {
  readonly name: string;
  readonly ip: string;
  readonly type: InterfaceType;
}

export interface NodeState {
  readonly id: string;
  /** Absent when the node has not reported memory yet: such a node can be in no plan. */
  readonly memory?: { readonly ramAvailable: number; readonly ramTotal: number };
  readonly interfaces: readonly NodeInterface[];
  readonly rdmaEnabled: boolean;
  /** workload id → fraction (0..1) of that workload already on this node's disk. */
  readonly cached: Readonly<Record<string, number>>;
}

/** `source` reached `sink` at `ip` (one of sink's addresses), optionally measured. */
export interface SocketLink {
  readonly kind: 'socket';
  readonly source: string;
  readonly sink: string;
  readonly ip: string;
  readonly type?: InterfaceType;
  readonly rttMs?: number;
  readonly bandwidthBps?: number;
}

/** An RDMA cable: `sourceIface` on source reaches `sinkIface` on sink. */
export interface RdmaLink {
  readonly kind: 'rdma';
  readonly source: string;
  readonly sink: string;
  readonly sourceIface: string;
  readonly sinkIface: string;
}

export type Link = SocketLink | RdmaLink;

export interface ClusterState {
  readonly nodes: readonly NodeState[];
  readonly links: readonly Link[];
}

/** Strictly decodes a cluster state; throws ValidationError naming the JSON path of the first problem. */
export function decodeClusterState(value: unknown, where: InputWhere = 'body', root = 'state'): ClusterState {
  const r = new Reader(where);
  const top = r.object(value, root, ['nodes', 'links']);
  const nodes = r.array(top.nodes, `${root}.nodes`).map((raw, i) => decodeNode(r, raw, `${root}.nodes[${i}]`));
  const ids = new Set<string>();
  nodes.forEach((node, i) => {
    if (ids.has(node.id)) r.fail(`${root}.nodes[${i}].id`, `duplicate node id ${JSON.stringify(node.id)}`);
    ids.add(node.id);
  });
  const links = top.links === undefined ? [] : r.array(top.links, `${root}.links`).map((raw, i) => decodeLink(r, raw, `${root}.links[${i}]`, ids));
  return { nodes, links };
}

function decodeNode(r: Reader, raw: unknown, path: string): NodeState {
  const o = r.object(raw, path, ['id', 'memory', 'interfaces', 'rdmaEnabled', 'cached']);
  const id = r.string(o.id, `${path}.id`);
  let memory: NodeState['memory'];
  if (o.memory !== undefined && o.memory !== null) {
    const m = r.object(o.memory, `${path}.memory`, ['ramAvailable', 'ramTotal']);
    const ramAvailable = r.number(m.ramAvailable, `${path}.memory.ramAvailable`, { min: 0 });
    const ramTotal = r.number(m.ramTotal, `${path}.memory.ramTotal`, { min: 0 });
    memory = { ramAvailable, ramTotal };
  }
  const interfaces = o.interfaces === undefined ? [] : r.array(o.interfaces, `${path}.interfaces`).map((rawIf, j) => {
    const p = `${path}.interfaces[${j}]`;
    const f = r.object(rawIf, p, ['name', 'ip', 'type']);
    return {
      name: r.string(f.name, `${p}.name`),
      ip: r.string(f.ip, `${p}.ip`),
      type: f.type === undefined ? 'unknown' : r.oneOf(f.type, `${p}.type`, INTERFACE_TYPES),
    };
  });
  const rdmaEnabled = o.rdmaEnabled === undefined ? false : r.boolean(o.rdmaEnabled, `${path}.rdmaEnabled`);
  const cached: Record<string, number> = {};
  if (o.cached !== undefined) {
    const c = r.record(o.cached, `${path}.cached`);
    for (const [workload, fraction] of Object.entries(c)) {
      cached[workload] = r.number(fraction, `${path}.cached.${workload}`, { min: 0, max: 1 });
    }
  }
  return memory ? { id, memory, interfaces, rdmaEnabled, cached } : { id, interfaces, rdmaEnabled, cached };
}

function decodeLink(r: Reader, raw: unknown, path: string, ids: ReadonlySet<string>): Link {
  const o = r.object(raw, path, ['source', 'sink', 'ip', 'type', 'rttMs', 'bandwidthBps', 'rdma']);
  const source = r.string(o.source, `${path}.source`);
  const sink = r.string(o.sink, `${path}.sink`);
  if (!ids.has(source)) r.fail(`${path}.source`, `unknown node ${JSON.stringify(source)}`);
  if (!ids.has(sink)) r.fail(`${path}.sink`, `unknown node ${JSON.stringify(sink)}`);
  if (source === sink) r.fail(`${path}.sink`, 'a link must join two different nodes');
  if (o.rdma !== undefined) {
    for (const key of ['ip', 'type', 'rttMs', 'bandwidthBps']) {
      if (o[key] !== undefined) r.fail(`${path}.${key}`, 'an rdma link carries no socket fields');
    }
    const d = r.object(o.rdma, `${path}.rdma`, ['sourceIface', 'sinkIface']);
    return { kind: 'rdma', source, sink, sourceIface: r.string(d.sourceIface, `${path}.rdma.sourceIface`), sinkIface: r.string(d.sinkIface, `${path}.rdma.sinkIface`) };
  }
  const ip = r.string(o.ip, `${path}.ip`);
  const link: { -readonly [K in keyof SocketLink]: SocketLink[K] } = { kind: 'socket', source, sink, ip };
  if (o.type !== undefined) link.type = r.oneOf(o.type, `${path}.type`, INTERFACE_TYPES);
  if (o.rttMs !== undefined && o.rttMs !== null) link.rttMs = r.number(o.rttMs, `${path}.rttMs`, { min: 0 });
  if (o.bandwidthBps !== undefined && o.bandwidthBps !== null) link.bandwidthBps = r.number(o.bandwidthBps, `${path}.bandwidthBps`, { min: 0 });
  return link;
}
