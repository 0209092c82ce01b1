/**
 * How a ClusterNode finds peers: its static peer list, and mDNS adverts. An advert from another cluster or
 * another protocol version is only noted as heard (with the reason), never dialled. Adverts pass the AdvertGate
 * first (source address must match, rate-limited): forged adverts cannot turn the node into a dialing machine.
 */
import { AdvertGate } from './advert-gate.js';
import type { Logger } from '../../../runtime/log.js';
import { PROTOCOL_VERSION } from '../../../protocols/peer-frames.js';
import { clusterNameHash } from './auth.js';
import { parsePeers, type ClusterNodeOptions } from '../cluster-node-options.js';
import type { ConnectionManager } from './connections.js';
import { MdnsDiscovery } from './discovery.js';
import type { Advert } from '../../../protocols/cluster-discovery.js';

export interface PeerDiscoveryOptions<S> {
  readonly options: ClusterNodeOptions<S>;
  readonly conns: ConnectionManager;
  /** The port this node listens on for peers (advertised). */
  readonly port: number;
  readonly addresses: readonly string[];
  readonly log: Logger;
  readonly gate?: AdvertGate;
}

/** Adds the static peers as targets and starts mDNS (unless disabled); returns the mDNS discovery to stop later. */
export function startPeerDiscovery<S>({
  options: o,
  conns,
  port,
  addresses,
  log,
  gate = new AdvertGate(),
}: PeerDiscoveryOptions<S>): MdnsDiscovery | null {
  for (const p of parsePeers(o.peers ?? [])) conns.addTarget(p.host, p.port + (o.peerPortOffset ?? 0), 'static');
  if (o.mdns === false) return null;
  const cluster = clusterNameHash(o.clusterName);
  const onAdvert = advertHandler(conns, cluster, gate);
  const mdns = new MdnsDiscovery({
    advert: { nodeId: o.nodeId, cluster, port, v: PROTOCOL_VERSION, incarnation: o.incarnation },
    addresses,
    log,
    onAdvert: (a, host, advertised) => onAdvert(a, host, advertised),
  });
  mdns.start();
  return mdns;
}

/** What an advert heard from `host` (the packet source) does: nothing, a heard entry, or a dial target. */
export function advertHandler(
  conns: ConnectionManager,
  cluster: string,
  gate: AdvertGate,
): (a: Advert, host: string, advertised: readonly string[]) => void {
  return (a, host, advertised) => {
    if (gate.check(host, advertised) !== 'accept') return;
    if (a.cluster !== cluster)
      conns.noteHeard({
        address: `${host}:${a.port}`,
        nodeId: a.nodeId,
        reason: 'other-cluster',
        detail: `cluster hash ${a.cluster}`,
        via: 'mdns',
      });
    else if (a.v !== PROTOCOL_VERSION)
      conns.noteHeard({
        address: `${host}:${a.port}`,
        nodeId: a.nodeId,
        reason: 'incompatible-version',
        detail: `protocol v${a.v}, mine v${PROTOCOL_VERSION}`,
        via: 'mdns',
      });
    else conns.addTarget(host, a.port, 'mdns', a.nodeId, a.incarnation);
    conns.tick();
  };
}
