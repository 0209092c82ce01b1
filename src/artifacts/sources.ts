/**
 * Where to fetch an artifact from: its holders in the replicated state, each with the addresses this node can
 * reach it at, best first. Measured links come first, fastest measured bandwidth first (so a thunderbolt link is
 * used when it measured faster than the LAN, and not when it did not); unmeasured ones follow by exo's type order
 * (thunderbolt > maybe_ethernet > ethernet > wifi > unknown), then lower RTT. Nodes without a link from this node
 * fall back to the addresses they announced.
 */
import type { ClusterState, LinkRecord } from '../actors/topology-keeper/state.js';

export interface SourceNode {
  readonly nodeId: string;
  /** base URLs, best first, e.g. http://10.77.1.2:52515 */
  readonly urls: readonly string[];
  /** verified chunks it holds (from the state; refreshed from the peer itself during a transfer) */
  readonly have: number;
  readonly chunks: number;
  /** measured bits/s of the best address, when measured */
  readonly bandwidthBps?: number;
  /** measured bits/s of each measured address, in `urls` order (they come first): a transfer uses them at once */
  readonly rates?: readonly number[];
}

const TYPE_RANK: Readonly<Record<string, number>> = {
  thunderbolt: 5,
  maybe_ethernet: 4,
  ethernet: 3,
  wifi: 2,
  unknown: 1,
};

function compareLinks(a: LinkRecord, b: LinkRecord): number {
  const ma = a.bandwidthBps !== undefined;
  const mb = b.bandwidthBps !== undefined;
  if (ma !== mb) return ma ? -1 : 1;
  if (ma && mb && a.bandwidthBps !== b.bandwidthBps) return b.bandwidthBps! - a.bandwidthBps!;
  if (!ma && (TYPE_RANK[a.type] ?? 0) !== (TYPE_RANK[b.type] ?? 0))
    return (TYPE_RANK[b.type] ?? 0) - (TYPE_RANK[a.type] ?? 0);
  return (a.rttMs ?? Infinity) - (b.rttMs ?? Infinity);
}

const urlOf = (ip: string, port: number): string => `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`;

/** The addresses of `sink` as seen from `me`, best first. */
export function addressesOf(
  state: ClusterState,
  me: string,
  sink: string,
): { urls: string[]; bandwidthBps?: number; rates?: number[] } {
  const node = Object.hasOwn(state.nodes, sink) ? state.nodes[sink] : undefined;
  if (!node) return { urls: [] };
  const links = state.links.filter((l) => l.source === me && l.sink === sink).sort(compareLinks);
  const urls = links.map((l) => urlOf(l.ip, node.apiPort));
  for (const a of node.apiAddresses) if (!urls.includes(urlOf(a.ip, a.port))) urls.push(urlOf(a.ip, a.port));
  const best = links[0]?.bandwidthBps;
  // Measured links sort first (one link per address: the state keys them by source, sink and address).
  const rates = links.filter((l) => l.bandwidthBps !== undefined).map((l) => l.bandwidthBps!);
  return best !== undefined ? { urls, bandwidthBps: best, rates } : { urls };
}

/** Every other node holding any chunk of `artifactId`, complete holders first, then by measured bandwidth. */
export function sourcesFor(state: ClusterState, me: string, artifactId: string): SourceNode[] {
  const record =
    state.artifacts && Object.hasOwn(state.artifacts, artifactId) ? state.artifacts[artifactId] : undefined;
  if (!record) return [];
  const out: SourceNode[] = [];
  for (const [nodeId, h] of Object.entries(record.holders)) {
    if (nodeId === me || h.have === 0) continue;
    const a = addressesOf(state, me, nodeId);
    if (a.urls.length === 0) continue;
    out.push({
      nodeId,
      urls: a.urls,
      have: h.have,
      chunks: record.chunks,
      ...(a.bandwidthBps !== undefined ? { bandwidthBps: a.bandwidthBps, rates: a.rates! } : {}),
    });
  }
  return out.sort(
    (a, b) =>
      (b.have === b.chunks ? 1 : 0) - (a.have === a.chunks ? 1 : 0) ||
      (b.bandwidthBps ?? 0) - (a.bandwidthBps ?? 0) ||
      (a.nodeId < b.nodeId ? -1 : 1),
  );
}
