/** The joined members as ClusterNode's queries (`members`, `view`) list them: what each one's hello said. */
import type { PeerConnection } from './transport/peer-connection.js';

export interface JoinedMember {
  nodeId: string;
  incarnation: number;
  address: string;
  port: number;
  name: string;
  lastHeard: number | undefined;
}

/** Joined peers (connected and authenticated) by node id, with when the core last heard each. */
export function joinedMembers(
  joined: Iterable<PeerConnection>,
  lastHeard: Readonly<Record<string, number>>,
): JoinedMember[] {
  return [...joined]
    .flatMap((c) =>
      c.remote
        ? [
            {
              nodeId: c.remote.nodeId,
              incarnation: c.remote.incarnation,
              address: c.remoteAddress,
              port: c.remote.port,
              name: c.remote.name,
              lastHeard: lastHeard[c.remote.nodeId],
            },
          ]
        : [],
    )
    .sort((a, b) => a.nodeId.localeCompare(b.nodeId));
}
