/** The product replica: the topology engineer's ClusterState, apply, digest and snapshot codec. */
import { decodeClusterEvent, decodeIndexedEvent } from '../../protocols/events.js';
import { applyEvent } from '../topology-keeper/apply.js';
import { stateDigest } from '../topology-keeper/digest.js';
import { decodeSnapshot, encodeSnapshot } from '../topology-keeper/snapshot.js';
import { emptyState, type ClusterState } from '../topology-keeper/state.js';
import type { StateMachine } from './agreement/state-machine.js';

export const topologyReplica: StateMachine<ClusterState> = {
  initial: () => emptyState,
  // Entries come from the wire: decode strictly before applying.
  apply: (state, entry) => applyEvent(state, decodeIndexedEvent(entry)),
  digest: stateDigest,
  encode: (state) => encodeSnapshot(state),
  decode: (raw) => decodeSnapshot(raw).state,
  members: (state) => Object.values(state.nodes).map((n) => ({ nodeId: n.id, incarnation: n.incarnation })),
  joinedEvent: (n) => ({
    type: 'NodeJoined',
    nodeId: n.nodeId,
    name: n.name,
    incarnation: n.incarnation,
    apiPort: n.apiPort,
    apiAddresses: n.addresses.map((ip) => ({ ip, port: n.apiPort })),
    peerPort: n.peerPort,
    version: n.version,
  }),
  goneEvent: (nodeId, reason) => ({ type: 'NodeGone', nodeId, reason }),
  leaderEvent: (nodeId) => ({ type: 'LeaderElected', nodeId }),
  check: (event) => void decodeClusterEvent(event),
};
