/**
 * exo's placement rule for a pipeline ring (docs/placement.md, "Rules, in order", lists where torus differs), as
 * the placement-quality benchmark compares against it. exo decides without measurements or device figures:
 *   - sets: the smallest size whose sets hold the workload in total memory; among them a set with a leaf (a node
 *     with at most one distinct out-neighbour in the whole cluster), then the most cached, then the most memory;
 *     the first in node order on a tie. A set that then fails the per-node memory check is a refusal (exo fails
 *     there instead of trying another set);
 *   - ring order: the set's first cycle in node order (exo takes a cycle as its enumeration returns it);
 *   - addresses: for each ring neighbour, among the socket links to it, the one whose address the neighbour's
 *     interface list labels best for a ring (thunderbolt, maybe_ethernet, ethernet, wifi, unknown); the first in
 *     the state's link order on a tie. A measured bandwidth plays no part;
 *   - layers: proportional to available memory (largest remainder), as torus splits them.
 * `priceExoChoice` then prices that choice with torus's own cost model over exactly the links exo dials.
 */
import { indexCluster } from '../../src/actors/placement-planner/search/cluster-index.js';
import {
  decodePlacementInput,
  type PlacementInput,
  type SocketLink,
} from '../../src/actors/placement-planner/search/placement-input.js';
import { predictionScore, predictPipeline } from '../../src/actors/placement-planner/search/cost-model.js';
import { findShareShortfall, splitLayersByMemory } from '../../src/actors/placement-planner/search/layer-split.js';
import type { PlacementRequest } from '../../src/actors/placement-planner/search/placement-request.js';

/** exo's ring table (lower wins): how it ranks a neighbour's address by the label of the interface holding it. */
const RING_PRIORITY: Readonly<Record<string, number>> = {
  thunderbolt: 0,
  maybe_ethernet: 1,
  ethernet: 2,
  wifi: 3,
  unknown: 4,
};

export interface ExoChoice {
  /** Ring order: node ids, rank 0 first. */
  readonly nodes: readonly string[];
  /** Layers per rank. */
  readonly layers: readonly number[];
  /** The socket link each rank dials to each ring neighbour (both directions of every hop). */
  readonly dials: readonly SocketLink[];
}

export type ExoAnswer = { readonly choice: ExoChoice } | { readonly refusal: string };

/** Socket links by ordered pair, in the state's order. */
function socketsByPair(input: PlacementInput): Map<string, SocketLink[]> {
  const out = new Map<string, SocketLink[]>();
  for (const l of input.links) {
    if (l.kind !== 'socket') continue;
    const key = `${l.source}\u0000${l.sink}`;
    out.set(key, [...(out.get(key) ?? []), l]);
  }
  return out;
}
const pair = (from: string, to: string) => `${from}\u0000${to}`;

/** exo's address for `from` → `to` on a ring: the best-labelled one by `to`'s interface list; first on a tie. */
export function exoRingAddress(
  input: PlacementInput,
  from: string,
  to: string,
  links = socketsByPair(input),
): SocketLink | undefined {
  const sink = input.nodes.find((n) => n.id === to);
  const typeOf = new Map((sink?.interfaces ?? []).map((i) => [i.ip, i.type]));
  let best: SocketLink | undefined;
  for (const link of links.get(pair(from, to)) ?? []) {
    const rank = RING_PRIORITY[typeOf.get(link.ip) ?? 'unknown'] ?? RING_PRIORITY.unknown!;
    const bestRank = best ? (RING_PRIORITY[typeOf.get(best.ip) ?? 'unknown'] ?? RING_PRIORITY.unknown!) : Infinity;
    if (rank < bestRank) best = link;
  }
  return best;
}

/** The first ring order of `members` (node indices, ascending) in which every neighbour pair has sockets both ways. */
function firstRing(
  ids: readonly string[],
  links: Map<string, SocketLink[]>,
  members: readonly number[],
): number[] | undefined {
  if (members.length <= 1) return [...members];
  const joined = (a: number, b: number) => links.has(pair(ids[a]!, ids[b]!)) && links.has(pair(ids[b]!, ids[a]!));
  const path = [members[0]!];
  const used = new Set(path);
  const extend = (): boolean => {
    if (path.length === members.length) return joined(path[path.length - 1]!, path[0]!);
    for (const m of members) {
      if (used.has(m) || !joined(path[path.length - 1]!, m)) continue;
      path.push(m);
      used.add(m);
      if (extend()) return true;
      path.pop();
      used.delete(m);
    }
    return false;
  };
  return extend() ? path : undefined;
}

/** Every k-subset of 0..n-1 in lexicographic order. */
function* subsets(n: number, k: number): Generator<number[]> {
  const pick = Array.from({ length: k }, (_, i) => i);
  while (true) {
    yield [...pick];
    let i = k - 1;
    while (i >= 0 && pick[i] === n - k + i) i--;
    if (i < 0) return;
    pick[i]!++;
    for (let j = i + 1; j < k; j++) pick[j] = pick[j - 1]! + 1;
  }
}

/** a < b in lexicographic order: b is preferred. Equal keys keep the first set (exo's `max` keeps the first). */
const before = (a: readonly number[], b: readonly number[]): boolean => {
  const i = a.findIndex((x, j) => x !== b[j]);
  return i !== -1 && a[i]! < b[i]!;
};

export function exoRule(input: PlacementInput, request: PlacementRequest): ExoAnswer {
  const w = request.workload;
  const ids = input.nodes.map((n) => n.id);
  const links = socketsByPair(input);
  const ram = input.nodes.map((n) => n.memory?.ramAvailable);
  const outNeighbours = input.nodes.map(
    (n) => new Set(input.links.filter((l) => l.source === n.id && l.sink !== n.id).map((l) => l.sink)).size,
  );
  const leaf = (m: number) => outNeighbours[m]! <= 1;
  const cached = (m: number) => input.nodes[m]?.cached[w.id] ?? 0;
  const from = Math.max(1, request.minNodes, request.requiredNodes.length);
  for (let k = from; k <= ids.length; k++) {
    let best: { ring: number[]; key: [number, number, number] } | undefined;
    for (const set of subsets(ids.length, k)) {
      if (set.some((m) => ram[m] === undefined)) continue;
      if (!request.requiredNodes.every((r) => set.includes(ids.indexOf(r)))) continue;
      const total = set.reduce((s, m) => s + (ram[m] as number), 0);
      if (total < w.memoryBytes) continue;
      const ring = firstRing(ids, links, set);
      if (!ring) continue;
      const key: [number, number, number] = [set.some(leaf) ? 1 : 0, set.reduce((s, m) => s + cached(m), 0), total];
      if (!best || before(best.key, key)) best = { ring, key };
    }
    if (!best) continue;
    const available = best.ring.map((m) => ram[m] as number);
    if (w.layers < best.ring.length) return { refusal: `${w.layers} layers cannot cover ${best.ring.length} nodes` };
    const layers = splitLayersByMemory(w.layers, available);
    const short = findShareShortfall(w.memoryBytes, w.layers, layers, available);
    if (short)
      return { refusal: `node ${ids[best.ring[short.position]!]} lacks memory for its ${short.layers} layers` };
    const nodes = best.ring.map((m) => ids[m]!);
    const dials: SocketLink[] = [];
    if (nodes.length > 1)
      for (let r = 0; r < nodes.length; r++) {
        const me = nodes[r]!;
        for (const other of new Set([nodes[(r + 1) % nodes.length]!, nodes[(r - 1 + nodes.length) % nodes.length]!])) {
          const link = exoRingAddress(input, me, other, links);
          if (!link) return { refusal: `no address from ${me} to ${other}` };
          dials.push(link);
        }
      }
    return { choice: { nodes, layers, dials } };
  }
  return { refusal: 'no set holds the workload' };
}

/**
 * exo's choice priced by torus's cost model: the same state (device figures, measured links), except that between
 * each pair of ring neighbours only the link exo dials is left, so the model prices that one.
 */
export function priceExoChoice(stateJson: unknown, request: PlacementRequest, choice: ExoChoice): number | undefined {
  const json = structuredClone(stateJson) as {
    nodes: unknown[];
    links: { source: string; sink: string; ip?: string }[];
  };
  const dialled = new Map(choice.dials.map((l) => [pair(l.source, l.sink), l.ip]));
  json.links = json.links.filter((l) => {
    const ip = dialled.get(pair(l.source, l.sink));
    return ip === undefined || l.ip === ip;
  });
  const index = indexCluster(decodePlacementInput(json), 'ring');
  const order = choice.nodes.map((id) => index.indexOf.get(id) as number);
  return predictionScore(predictPipeline(index, order, choice.layers, request.workload, request.objective));
}
