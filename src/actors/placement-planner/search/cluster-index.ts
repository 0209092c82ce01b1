import { chooseRingAddress, hopScore, RDMA_ONLY_SCORE, type AddressChoice } from './address-choice.js';
import type { Backend } from './placement-request.js';
import type { PlacementInput, NodeState, RdmaLink, SocketLink } from './placement-input.js';

/**
 * The state arranged for planning. Nodes are indexed in id order (the documented deterministic order); pair data
 * lives in flat n×n arrays. A pair {a, b} is a usable ring hop when both directions have a usable link: socket
 * links for the ring backend (each side needs an address for the other), socket or RDMA links for jaccl.
 */
export interface ClusterIndex {
  readonly n: number;
  readonly nodes: readonly NodeState[];
  readonly ids: readonly string[];
  readonly indexOf: ReadonlyMap<string, number>;
  /** Links source → sink, keyed source * n + sink, in input order. */
  readonly socket: ReadonlyMap<number, readonly SocketLink[]>;
  readonly rdma: ReadonlyMap<number, readonly RdmaLink[]>;
  /** exo's leaf: at most one distinct out-neighbour over all links. */
  readonly leaf: readonly boolean[];
  /** Chosen ring address source → sink (undefined: no socket link). */
  readonly ringChoice: readonly (AddressChoice | undefined)[];
  /** Symmetric hop score (min of both directions), -Infinity when the pair cannot be a ring hop. */
  readonly hop: Float64Array;
  /** Symmetric hop RTT (mean of both directions' chosen addresses; 0 where unmeasured). */
  readonly rtt: Float64Array;
}

export function indexCluster(state: PlacementInput, backend: Backend): ClusterIndex {
  const nodes = [...state.nodes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const n = nodes.length;
  const ids = nodes.map((x) => x.id);
  const indexOf = new Map(ids.map((id, i) => [id, i] as const));
  const socket = new Map<number, SocketLink[]>();
  const rdma = new Map<number, RdmaLink[]>();
  const out = nodes.map(() => new Set<number>());
  for (const link of state.links) {
    const s = indexOf.get(link.source),
      t = indexOf.get(link.sink);
    if (s === undefined || t === undefined || s === t) continue;
    out[s]?.add(t);
    const table = link.kind === 'socket' ? socket : rdma;
    const key = s * n + t;
    const list = (table.get(key) ?? []) as (SocketLink | RdmaLink)[];
    list.push(link);
    table.set(key, list as never);
  }
  const ringChoice: (AddressChoice | undefined)[] = new Array(n * n).fill(undefined);
  for (const [key, links] of socket) ringChoice[key] = chooseRingAddress(links, nodes[key % n]);
  const hop = new Float64Array(n * n).fill(Number.NEGATIVE_INFINITY);
  const rtt = new Float64Array(n * n);
  for (let a = 0; a < n; a++) {
    for (let b = a + 1; b < n; b++) {
      const ab = ringChoice[a * n + b],
        ba = ringChoice[b * n + a];
      let score = Number.NEGATIVE_INFINITY;
      if (ab && ba) score = Math.min(hopScore(ab), hopScore(ba));
      else if (backend === 'jaccl' && rdma.has(a * n + b) && rdma.has(b * n + a)) score = RDMA_ONLY_SCORE;
      hop[a * n + b] = hop[b * n + a] = score;
      const r = ((ab?.rttMs ?? 0) + (ba?.rttMs ?? 0)) / 2;
      rtt[a * n + b] = rtt[b * n + a] = r;
    }
  }
  return { n, nodes, ids, indexOf, socket, rdma, leaf: out.map((s) => s.size <= 1), ringChoice, hop, rtt };
}

/** Sub-problem matrices for the nodes `members` (global indices), in that order. */
export function subMatrices(index: ClusterIndex, members: readonly number[]): { hop: Float64Array; rtt: Float64Array } {
  const k = members.length;
  const hop = new Float64Array(k * k).fill(Number.NEGATIVE_INFINITY);
  const rtt = new Float64Array(k * k);
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      if (i === j) continue;
      const g = (members[i] as number) * index.n + (members[j] as number);
      hop[i * k + j] = index.hop[g] as number;
      rtt[i * k + j] = index.rtt[g] as number;
    }
  }
  return { hop, rtt };
}
