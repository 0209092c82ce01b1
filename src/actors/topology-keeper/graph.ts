/**
 * Read-only queries on the link multigraph of a state (exo's Topology operations, without mutation).
 * Edges are directed: `source → sink` at `ip` means source reached sink at one of sink's addresses.
 */
import { cmp, own, type ClusterState, type LinkRecord, type NodeRecord } from './state.js';

/** Nodes in id order. */
export function listNodes(state: ClusterState): NodeRecord[] {
  return Object.keys(state.nodes)
    .sort(cmp)
    .map((k) => state.nodes[k]!);
}

export function hasNode(state: ClusterState, id: string): boolean {
  return own(state.nodes, id) !== undefined;
}

/** Every edge leaving `node` (all addresses), in canonical order. */
export function outEdges(state: ClusterState, node: string): LinkRecord[] {
  return state.links.filter((l) => l.source === node);
}

export function inEdges(state: ClusterState, node: string): LinkRecord[] {
  return state.links.filter((l) => l.sink === node);
}

/** All edges `source → sink` (one per working address of sink). */
export function linksBetween(state: ClusterState, source: string, sink: string): LinkRecord[] {
  return state.links.filter((l) => l.source === source && l.sink === sink);
}

/** Distinct out-neighbours, sorted. */
export function neighbours(state: ClusterState, node: string): string[] {
  return [...new Set(outEdges(state, node).map((l) => l.sink))].sort(cmp);
}

/** exo's leaf: a known node with at most one distinct out-neighbour (a node with no edges is a leaf). */
export function isLeaf(state: ClusterState, node: string): boolean {
  return hasNode(state, node) && neighbours(state, node).length <= 1;
}

/** The state restricted to `ids`: those nodes and the edges with both ends among them (instances and tasks kept). */
export function subgraph(state: ClusterState, ids: Iterable<string>): ClusterState {
  const keep = new Set([...ids].filter((id) => hasNode(state, id)));
  const nodes = Object.fromEntries([...keep].sort(cmp).map((id) => [id, state.nodes[id]!]));
  return { ...state, nodes, links: state.links.filter((l) => keep.has(l.source) && keep.has(l.sink)) };
}
