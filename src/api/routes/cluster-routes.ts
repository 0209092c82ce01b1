import type { PeerView } from '../node-facade.js';
import type { Route } from '../router.js';

/**
 * A peer as GET /v1/peers answers it: `lastHeardAt` is `at` under its older name, still sent for clients of the
 * release before (the schema marks it deprecated).
 */
const peerOnWire = (p: PeerView): PeerView => (p.at === undefined ? p : { ...p, lastHeardAt: p.at });

/** Read-only views of this node and the replicated cluster state. */
export const clusterRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/node_id',
    summary: "this node's id as a JSON string (the profiler's identity probe; the one route open to anyone)",
    access: 'public',
    handler: async ({ facade }) => ({ status: 200, body: (await facade.node()).id }),
  },
  {
    method: 'GET',
    path: '/v1/node',
    summary: 'id, name, version, incarnation, uptime, role and security mode of this node',
    handler: async ({ facade, shared }) => ({
      status: 200,
      body: { ...(await facade.node()), security: shared.auth.security },
    }),
  },
  {
    method: 'GET',
    path: '/v1/state',
    summary: 'the replicated state with its digest and last applied index',
    handler: async ({ facade }) => ({ status: 200, body: await facade.state() }),
  },
  {
    method: 'GET',
    path: '/v1/topology',
    summary: 'nodes with profiles; links per address with type, RTT, bandwidth, measured-at',
    handler: async ({ facade }) => ({ status: 200, body: await facade.topology() }),
  },
  {
    method: 'GET',
    path: '/v1/peers',
    summary: 'nodes heard but not joined, with the reason',
    handler: async ({ facade }) => ({ status: 200, body: { peers: (await facade.peers()).map(peerOnWire) } }),
  },
];
