/**
 * The answers about this node and its cluster: identity and role, the replicated state, the topology, peers
 * heard, member removal.
 */
import { INTERFACE_TYPES } from '../../protocols/events.js';
import { calibrationFigures } from './calibrations.js';
import { MapOf, StringEnum, Type } from '../../protocols/schema-kit.js';
import { ref, str, num, int, bool, opt, CLOSED, open, epochMs } from './kit.js';

const role = StringEnum(['leader', 'follower', 'candidate', 'alone']);
/** This node's own role: also `unknown` when its cluster actor did not answer (`clusterUnavailable` says why). */
const ownRole = StringEnum(['leader', 'follower', 'candidate', 'alone', 'unknown']);
const quorum = Type.Object(
  { ok: bool, members: int, reached: int, needed: int, why: opt(str) },
  { ...CLOSED, description: 'without a quorum the node refuses writes (TORUS_NO_QUORUM)' },
);
const security = Type.Object(
  { mode: StringEnum(['secret', 'open']), secretSource: opt(str), warning: opt(str) },
  {
    ...CLOSED,
    description:
      'secret: a cluster credential guards the API and the cluster port (secretSource says where the secret came from, never its value); open: --insecure-open, anyone who reaches the node controls it',
  },
);

const topologyNode = Type.Object(
  {
    id: str,
    name: opt(str),
    incarnation: opt(int),
    version: opt(str),
    role: opt(role),
    memory: opt(Type.Object({ ramAvailable: num, ramTotal: num }, { ...CLOSED, description: 'bytes' })),
    interfaces: opt(
      Type.Array(Type.Object({ name: str, ip: str, type: StringEnum(INTERFACE_TYPES) }, CLOSED), {
        description: 'one entry per address',
      }),
    ),
    device: opt(
      Type.Object(
        {
          memoryBandwidthGBps: opt(num),
          gflops: opt(num),
          memoryBandwidthSource: opt(StringEnum(['measured', 'declared'])),
          gflopsSource: opt(StringEnum(['measured', 'declared'])),
          measuredAt: opt(num),
        },
        { ...CLOSED, description: 'memory bandwidth (GB/s) and f32 compute (GFLOP/s), measured or declared' },
      ),
    ),
    calibrations: opt(
      MapOf(calibrationFigures, {
        description: 'framework → what a calibration measured it reach on this node (POST /v1/calibrations)',
      }),
    ),
  },
  CLOSED,
);
const topologyLink = Type.Object(
  {
    source: str,
    sink: str,
    ip: str,
    type: StringEnum(INTERFACE_TYPES, { description: "the sink interface's type" }),
    rttMs: opt(num),
    bandwidthBps: opt(Type.Number({ description: 'bits per second' })),
    measuredAt: opt(epochMs('last measurement')),
  },
  { ...CLOSED, description: 'one directed edge per working address' },
);

export const clusterResponses = {
  NodeInfo: Type.Object(
    {
      id: str,
      name: str,
      version: str,
      incarnation: int,
      uptimeMs: num,
      role: ownRole,
      leaderId: opt(str),
      cluster: opt(str),
      quorum: opt(quorum),
      clusterUnavailable: opt(
        Type.Object(
          { code: str, message: str },
          {
            ...CLOSED,
            description:
              'the cluster actor did not answer (busy past the timeout, restarting): role and quorum unknown',
          },
        ),
      ),
      security: opt(security),
    },
    CLOSED,
  ),
  StateView: Type.Object(
    {
      state: open(
        'the replicated state exactly as the topology keeper holds it (src/actors/topology-keeper/state.ts)',
        {
          lastIndex: int,
          lastTerm: int,
          nodes: MapOf(open('a node record'), { description: 'node records by id' }),
          links: Type.Array(open('a link record')),
          instances: MapOf(open('an instance record'), { description: 'instance records by id' }),
        },
      ),
      digest: str,
      lastIndex: int,
    },
    CLOSED,
  ),
  Topology: Type.Object(
    { nodes: Type.Array(topologyNode), links: Type.Array(topologyLink), lastIndex: opt(int) },
    CLOSED,
  ),
  Peer: Type.Object(
    {
      address: str,
      id: opt(str),
      nodeId: opt(str),
      reason: StringEnum(['other-cluster', 'incompatible-version', 'auth-required', 'auth-failure', 'unreachable']),
      detail: opt(str),
      via: opt(StringEnum(['static', 'mdns', 'gossip', 'inbound'])),
      at: opt(epochMs('last heard')),
      lastHeardAt: opt(
        Type.Number({
          deprecated: true,
          description:
            'deprecated: the same value as `at` (last heard, epoch milliseconds), kept for older clients; read `at`',
        }),
      ),
      attempts: opt(Type.Integer({ description: 'refused dials in a row' })),
      nextRetryAt: opt(epochMs('next dial')),
    },
    { ...CLOSED, description: 'a node heard but not joined, and why' },
  ),
  PeerList: Type.Object({ peers: Type.Array(ref('Peer')) }, CLOSED),
  MemberRemoved: Type.Object({ nodeId: str, status: Type.Literal('removed'), message: str }, CLOSED),
  MemberRemovalPending: Type.Object({ nodeId: str, status: Type.Literal('pending'), message: str }, CLOSED),
};
