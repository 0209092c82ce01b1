/**
 * Appliers for membership and link events. Each is total and deterministic: an event that refers to an
 * unknown node, an older incarnation or a missing link changes nothing (the log may carry late facts, e.g. a
 * LinkUp sequenced after the node left), so every node folds the same log to the same state.
 */
import type {
  LinkDown,
  LinkMeasured,
  LinkUp,
  NodeGone,
  NodeJoined,
  NodeProfileUpdated,
} from '../../protocols/events.js';
import {
  compact,
  compareLinks,
  own,
  withEntry,
  withoutEntry,
  type ClusterState,
  type InstanceRecord,
  type LinkRecord,
} from './state.js';

type At = number | undefined;

/** Links with `node` at either end removed. */
function withoutLinksOf(links: readonly LinkRecord[], node: string): readonly LinkRecord[] {
  return links.filter((l) => l.source !== node && l.sink !== node);
}

/** Runner records of `node` dropped from every instance (its processes are gone). */
function withoutRunnersOf(instances: ClusterState['instances'], node: string): ClusterState['instances'] {
  let out = instances;
  for (const [id, inst] of Object.entries(instances)) {
    if (Object.hasOwn(inst.runners, node))
      out = withEntry(out, id, { ...inst, runners: withoutEntry(inst.runners, node) });
  }
  return out;
}

/** A first join adds the node; a new incarnation (restart) also drops its stale links and runner records. */
export function applyNodeJoined(state: ClusterState, e: NodeJoined, at: At): ClusterState {
  const known = own(state.nodes, e.nodeId);
  if (known && e.incarnation < known.incarnation) return state; // a late fact about an earlier process
  const restarted = known !== undefined && e.incarnation > known.incarnation;
  const node = compact({
    id: e.nodeId,
    name: e.name,
    incarnation: e.incarnation,
    apiPort: e.apiPort,
    apiAddresses: e.apiAddresses,
    peerPort: e.peerPort,
    version: e.version,
    joinedAt: known && !restarted ? known.joinedAt : at,
    profile: known?.profile,
  });
  const nodes = withEntry(state.nodes, e.nodeId, node);
  if (!restarted) return { ...state, nodes };
  return {
    ...state,
    nodes,
    links: withoutLinksOf(state.links, e.nodeId),
    instances: withoutRunnersOf(state.instances, e.nodeId),
  };
}

export function applyNodeProfileUpdated(state: ClusterState, e: NodeProfileUpdated, at: At): ClusterState {
  const node = own(state.nodes, e.nodeId);
  if (!node || (e.incarnation !== undefined && e.incarnation !== node.incarnation)) return state;
  const profile = compact({
    interfaces: e.interfaces,
    memory: e.memory,
    rdmaEnabled: e.rdmaEnabled,
    cached: e.cached,
    runners: e.runners,
    device: e.device,
    updatedAt: at,
  });
  return { ...state, nodes: withEntry(state.nodes, e.nodeId, { ...node, profile }) };
}

/** The node leaves: its links (both directions) and runner records go, its live instances need re-placement. */
export function applyNodeGone(state: ClusterState, e: NodeGone, at: At): ClusterState {
  if (!own(state.nodes, e.nodeId)) return state;
  let instances = withoutRunnersOf(state.instances, e.nodeId);
  for (const [id, inst] of Object.entries(instances)) {
    if (inst.status !== 'active' || !inst.plan.nodes.includes(e.nodeId)) continue;
    const marked: InstanceRecord = compact({
      ...inst,
      status: 'needs-replacement',
      reason: `node ${e.nodeId} left: ${e.reason}`,
      updatedAt: at,
    });
    instances = withEntry(instances, id, marked);
  }
  return {
    ...state,
    nodes: withoutEntry(state.nodes, e.nodeId),
    links: withoutLinksOf(state.links, e.nodeId),
    instances,
  };
}

/** A fact reported by `source`: void when either end is unknown or it comes from an earlier incarnation. */
function fromCurrentSource(
  state: ClusterState,
  e: { source: string; sink: string; sourceIncarnation?: number },
): boolean {
  const source = own(state.nodes, e.source);
  if (!source || !own(state.nodes, e.sink) || e.source === e.sink) return false;
  return e.sourceIncarnation === undefined || e.sourceIncarnation === source.incarnation;
}

function findLink(links: readonly LinkRecord[], key: { source: string; sink: string; ip: string }): number {
  return links.findIndex((l) => compareLinks(l, key) === 0);
}

/** Adds the edge (kept sorted) or, for a known edge, updates its type and keeps its measurements. */
export function applyLinkUp(state: ClusterState, e: LinkUp, at: At): ClusterState {
  if (!fromCurrentSource(state, e)) return state;
  const i = findLink(state.links, e);
  const links = [...state.links];
  if (i >= 0) {
    links[i] = { ...links[i]!, type: e.linkType };
  } else {
    links.push(compact({ source: e.source, sink: e.sink, ip: e.ip, type: e.linkType, upAt: at }));
    links.sort(compareLinks);
  }
  return { ...state, links };
}

export function applyLinkMeasured(state: ClusterState, e: LinkMeasured): ClusterState {
  if (!fromCurrentSource(state, e)) return state;
  const i = findLink(state.links, e);
  if (i < 0) return state; // measurements only decorate an edge that LinkUp created
  const links = [...state.links];
  links[i] = { ...links[i]!, rttMs: e.rttMs, bandwidthBps: e.bandwidthBps, measuredAt: e.measuredAt };
  return { ...state, links };
}

export function applyLinkDown(state: ClusterState, e: LinkDown): ClusterState {
  if (!fromCurrentSource(state, e)) return state;
  const i = findLink(state.links, e);
  if (i < 0) return state;
  return { ...state, links: state.links.filter((_, j) => j !== i) };
}
