/**
 * Answers to the keeper's read requests, as pure functions of the applied state (so they are tested without a
 * worker).
 * Every answer is plain JSON data.
 */
import { TorusError } from '../../protocols/errors.js';
import { stateDigest } from './digest.js';
import { listNodes } from './graph.js';
import { instancesToReplace, toPlacementState, type PlacementState, type ReplacementNeed } from './placement-state.js';
import { encodeSnapshot, type StateSnapshot } from './snapshot.js';
import { cmp, own, type ClusterState, type InstanceRecord, type LinkRecord, type NodeRecord } from './state.js';

const digests = new WeakMap<ClusterState, string>();

/** The digest of a state, computed once per state object (states are immutable). */
export function digestOf(state: ClusterState): string {
  let d = digests.get(state);
  if (d === undefined) {
    d = stateDigest(state);
    digests.set(state, d);
  }
  return d;
}

export interface StateAnswer {
  readonly state: ClusterState;
  readonly digest: string;
  readonly lastIndex: number;
  readonly lastTerm: number;
}
export function stateAnswer(s: ClusterState): StateAnswer {
  return { state: s, digest: digestOf(s), lastIndex: s.lastIndex, lastTerm: s.lastTerm };
}

export interface TopologyAnswer {
  readonly nodes: readonly NodeRecord[];
  readonly links: readonly LinkRecord[];
  readonly lastIndex: number;
  readonly digest: string;
}
export function topologyAnswer(s: ClusterState): TopologyAnswer {
  return { nodes: listNodes(s), links: s.links, lastIndex: s.lastIndex, digest: digestOf(s) };
}

export interface InstanceAnswer extends InstanceRecord {
  readonly id: string;
}
export function instancesAnswer(s: ClusterState): {
  readonly instances: readonly InstanceAnswer[];
  readonly lastIndex: number;
} {
  const ids = Object.keys(s.instances).sort(cmp);
  return { instances: ids.map((id) => ({ id, ...s.instances[id]! })), lastIndex: s.lastIndex };
}

export function instanceAnswer(s: ClusterState, id: string): InstanceAnswer {
  const inst = own(s.instances, id);
  if (!inst) throw new TorusError('TORUS_INSTANCE_UNKNOWN', `no instance ${JSON.stringify(id)}`, { id });
  const tasks = Object.values(s.tasks)
    .filter((t) => t.instanceId === id)
    .map((t) => t.id)
    .sort(cmp);
  return { id, ...inst, tasks } as InstanceAnswer;
}

export function placementStateAnswer(s: ClusterState): PlacementState {
  return toPlacementState(s);
}

export function toReplaceAnswer(s: ClusterState): {
  readonly instances: readonly ReplacementNeed[];
  readonly lastIndex: number;
} {
  return { instances: instancesToReplace(s), lastIndex: s.lastIndex };
}

export function snapshotAnswer(s: ClusterState): StateSnapshot {
  return { ...encodeSnapshot(s), digest: digestOf(s) };
}

/** The replica part of the view the keeper's thread pushes to the host on every change. */
export interface ReplicaView {
  readonly lastIndex: number;
  readonly lastTerm: number;
  readonly digest: string;
  readonly counts: {
    readonly nodes: number;
    readonly links: number;
    readonly instances: number;
    readonly tasks: number;
  };
}

export function replicaView(s: ClusterState): ReplicaView {
  return {
    lastIndex: s.lastIndex,
    lastTerm: s.lastTerm,
    digest: digestOf(s),
    counts: {
      nodes: Object.keys(s.nodes).length,
      links: s.links.length,
      instances: Object.keys(s.instances).length,
      tasks: Object.keys(s.tasks).length,
    },
  };
}
