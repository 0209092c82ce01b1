/**
 * The planner's input, `PlacementInput`: the nodes and links it reads (the `--state` file of `torus plan`, or the
 * live topology turned into this shape by topology-keeper's `toPlacementState`). Memory is in bytes;
 * `bandwidthBps` is bits per second, as iperf3 and the profiler report it.
 */
import { ValidationError } from '../../../protocols/errors.js';
import { CalibrationFigures, FRAMEWORK_PATTERN, MAX_FRAMEWORKS_PER_NODE } from '../../../protocols/calibration.js';
import { compileWorded, MapOf, StringEnum, Type, type TSchema } from '../../../protocols/schema-kit.js';
import { INTERFACE_TYPES, type InterfaceType } from '../../../protocols/interface-types.js';
import type { Link } from '../../../protocols/link.js';

export type { InterfaceType };

/** Where a placement input came from: an API body, or a file/flag given to the offline command. */
export type InputWhere = 'body' | 'config';

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
  /** What the node can do (measured at start, or declared for an accelerator); absent figures are unknown. */
  readonly device?: DeviceFigures;
  /** framework → figures a calibration measured with it (docs/placement.md, "Calibrated figures"). */
  readonly calibrations?: Readonly<Record<string, CalibratedFigures>>;
}

/** What a framework achieves on a node: compute GFLOP/s, read GB/s, a fixed ms per layer; `measuredAt` epoch ms. */
export interface CalibratedFigures {
  readonly gflops: number;
  readonly memoryBandwidthGBps: number;
  readonly layerOverheadMs: number;
  /** the framework's cost of one pipeline hop, the link aside (absent in older calibrations) */
  readonly hopOverheadMs?: number;
  readonly measuredAt: number;
}

/** A node's speed: streaming memory read in GB/s (10^9 bytes/s) and f32 compute in GFLOP/s. */
export interface DeviceFigures {
  readonly memoryBandwidthGBps?: number;
  readonly gflops?: number;
}

/** The one link type (protocols/link.ts) as the planner's union tells it from an RDMA cable. */
export interface SocketLink extends Link {
  readonly kind: 'socket';
}

/** An RDMA cable: `sourceIface` on source reaches `sinkIface` on sink. */
export interface RdmaLink {
  readonly kind: 'rdma';
  readonly source: string;
  readonly sink: string;
  readonly sourceIface: string;
  readonly sinkIface: string;
}

/** What the planner reads of a pair of nodes: an address one reaches the other at, or an RDMA cable. */
export type PlanLink = SocketLink | RdmaLink;

export interface PlacementInput {
  readonly nodes: readonly NodeState[];
  readonly links: readonly PlanLink[];
}

const NonEmpty = Type.String({ minLength: 1 });
/** `null` reads as absent, as the hand-written reader allowed (JSON writers emit null for a missing figure). */
const Nullable = <S extends TSchema>(schema: S) => Type.Optional(Type.Union([schema, Type.Null()]));
const InterfaceInput = Type.Object(
  { name: NonEmpty, ip: NonEmpty, type: Type.Optional(StringEnum(INTERFACE_TYPES)) },
  { additionalProperties: false },
);
const NodeInput = Type.Object(
  {
    id: NonEmpty,
    memory: Nullable(
      Type.Object(
        { ramAvailable: Type.Number({ minimum: 0 }), ramTotal: Type.Number({ minimum: 0 }) },
        { additionalProperties: false },
      ),
    ),
    interfaces: Type.Optional(Type.Array(InterfaceInput)),
    rdmaEnabled: Type.Optional(Type.Boolean()),
    cached: Type.Optional(MapOf(Type.Number({ minimum: 0, maximum: 1 }))),
    device: Nullable(
      Type.Object(
        {
          memoryBandwidthGBps: Nullable(Type.Number({ exclusiveMinimum: 0 })),
          gflops: Nullable(Type.Number({ exclusiveMinimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
    calibrations: Type.Optional(
      Type.Record(Type.String({ pattern: FRAMEWORK_PATTERN.source }), CalibrationFigures, {
        additionalProperties: false,
        maxProperties: MAX_FRAMEWORKS_PER_NODE,
      }),
    ),
  },
  { additionalProperties: false },
);
/** One shape for both kinds: `rdma` present makes it a cable, else `ip` is required (checked after, to name it). */
const LinkInput = Type.Object(
  {
    source: NonEmpty,
    sink: NonEmpty,
    ip: Type.Optional(NonEmpty),
    type: Type.Optional(StringEnum(INTERFACE_TYPES)),
    rttMs: Nullable(Type.Number({ minimum: 0 })),
    bandwidthBps: Nullable(Type.Number({ minimum: 0 })),
    rdma: Type.Optional(Type.Object({ sourceIface: NonEmpty, sinkIface: NonEmpty }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
/** The planner's input state as written (`--state` file, the planner's mailbox body); `decodePlacementInput` fills defaults. */
export const PlacementInputSchema = Type.Object(
  { nodes: Type.Array(NodeInput), links: Type.Optional(Type.Array(LinkInput)) },
  { additionalProperties: false },
);

const codecs = {
  body: compileWorded(PlacementInputSchema, 'body'),
  config: compileWorded(PlacementInputSchema, 'config'),
};

/** Strictly decodes the planner's input; throws ValidationError naming the JSON path of the first problem. */
export function decodePlacementInput(value: unknown, where: InputWhere = 'body', root = 'state'): PlacementInput {
  const input = codecs[where].decode(value, root);
  const fail = (path: string, why: string): never => {
    throw new ValidationError(where, path, why);
  };
  const ids = new Set<string>();
  const nodes = input.nodes.map((n, i): NodeState => {
    if (ids.has(n.id)) fail(`${root}.nodes[${i}].id`, `duplicate node id ${JSON.stringify(n.id)}`);
    ids.add(n.id);
    const interfaces = (n.interfaces ?? []).map((f) => ({ name: f.name, ip: f.ip, type: f.type ?? 'unknown' }));
    const device: { -readonly [K in keyof DeviceFigures]: DeviceFigures[K] } = {};
    if (typeof n.device?.memoryBandwidthGBps === 'number') device.memoryBandwidthGBps = n.device.memoryBandwidthGBps;
    if (typeof n.device?.gflops === 'number') device.gflops = n.device.gflops;
    const base = {
      id: n.id,
      interfaces,
      rdmaEnabled: n.rdmaEnabled ?? false,
      cached: { ...n.cached },
      ...(Object.keys(device).length > 0 ? { device } : {}),
      ...(n.calibrations && Object.keys(n.calibrations).length > 0 ? { calibrations: { ...n.calibrations } } : {}),
    };
    return n.memory ? { ...base, memory: { ramAvailable: n.memory.ramAvailable, ramTotal: n.memory.ramTotal } } : base;
  });
  const links = (input.links ?? []).map((l, i): PlanLink => {
    const path = `${root}.links[${i}]`;
    if (!ids.has(l.source)) fail(`${path}.source`, `unknown node ${JSON.stringify(l.source)}`);
    if (!ids.has(l.sink)) fail(`${path}.sink`, `unknown node ${JSON.stringify(l.sink)}`);
    if (l.source === l.sink) fail(`${path}.sink`, 'a link must join two different nodes');
    if (l.rdma) {
      for (const key of ['ip', 'type', 'rttMs', 'bandwidthBps'] as const) {
        if (l[key] !== undefined) fail(`${path}.${key}`, 'an rdma link carries no socket fields');
      }
      return {
        kind: 'rdma',
        source: l.source,
        sink: l.sink,
        sourceIface: l.rdma.sourceIface,
        sinkIface: l.rdma.sinkIface,
      };
    }
    if (l.ip === undefined) return fail(`${path}.ip`, 'is required');
    const link: { -readonly [K in keyof SocketLink]: SocketLink[K] } = {
      kind: 'socket',
      source: l.source,
      sink: l.sink,
      ip: l.ip,
    };
    if (l.type !== undefined) link.type = l.type;
    if (l.rttMs !== undefined && l.rttMs !== null) link.rttMs = l.rttMs;
    if (l.bandwidthBps !== undefined && l.bandwidthBps !== null) link.bandwidthBps = l.bandwidthBps;
    return link;
  });
  return { nodes, links };
}
