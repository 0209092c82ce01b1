/**
 * Answers to the keeper's read requests, as pure functions of the buffer (so they are tested without a worker).
 * Every answer is plain JSON data.
 */
import { TorusError } from '../../protocols/errors.js';
import { stateDigest } from './digest.js';
import type { EventBuffer } from './event-buffer.js';
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
export function stateAnswer(b: EventBuffer): StateAnswer {
  return { state: b.state, digest: digestOf(b.state), lastIndex: b.state.lastIndex, lastTerm: b.state.lastTerm };
}

export interface TopologyAnswer {
  readonly nodes: readonly NodeRecord[];
  readonly links: readonly LinkRecord[];
  readonly lastIndex: number;
  readonly digest: string;
}
export function topologyAnswer(b: EventBuffer): TopologyAnswer {
  return { nodes: listNodes(b.state), links: b.state.links, lastIndex: b.state.lastIndex, digest: digestOf(b.state) };
}

export interface InstanceAnswer extends InstanceRecord {
  readonly id: string;
}
export function instancesAnswer(b: EventBuffer): {
  readonly instances: readonly InstanceAnswer[];
  readonly lastIndex: number;
} {
  const ids = Object.keys(b.state.instances).sort(cmp);
  return { instances: ids.map((id) => ({ id, ...b.state.instances[id]! })), lastIndex: b.state.lastIndex };
}

export function instanceAnswer(b: EventBuffer, id: string): InstanceAnswer {
  const inst = own(b.state.instances, id);
  if (!inst) throw new TorusError('TORUS_INSTANCE_UNKNOWN', `no instance ${JSON.stringify(id)}`, { id });
  const tasks = Object.values(b.state.tasks)
    .filter((t) => t.instanceId === id)
    .map((t) => t.id)
    .sort(cmp);
  return { id, ...inst, tasks } as InstanceAnswer;
}

export function placementStateAnswer(b: EventBuffer): PlacementState {
  return toPlacementState(b.state);
}

export function toReplaceAnswer(b: EventBuffer): {
  readonly instances: readonly ReplacementNeed[];
  readonly lastIndex: number;
} {
  return { instances: instancesToReplace(b.state), lastIndex: b.state.lastIndex };
}

export function snapshotAnswer(b: EventBuffer): StateSnapshot {
  return { ...encodeSnapshot(b.state), digest: digestOf(b.state) };
}

/** The compact view pushed to the host on every change. */
export interface KeeperView {
  readonly value: string;
  readonly lastIndex: number;
  readonly lastTerm: number;
  readonly digest: string;
  readonly counts: {
    readonly nodes: number;
    readonly links: number;
    readonly instances: number;
    readonly tasks: number;
  };
  readonly pending: number;
  readonly gap?: { readonly from: number; readonly to: number };
  readonly rejected: number;
  readonly lastRejection?: { readonly index: number; readonly code: string; readonly message: string };
}

export function keeperView(
  value: unknown,
  b: EventBuffer,
  rejected: number,
  lastRejection?: { index: number; error: { code: string; message: string } },
): KeeperView {
  const s = b.state;
  const first = b.pending[0];
  return {
    value: String(value),
    lastIndex: s.lastIndex,
    lastTerm: s.lastTerm,
    digest: digestOf(s),
    counts: {
      nodes: Object.keys(s.nodes).length,
      links: s.links.length,
      instances: Object.keys(s.instances).length,
      tasks: Object.keys(s.tasks).length,
    },
    pending: b.pending.length,
    ...(first ? { gap: { from: s.lastIndex + 1, to: first.entry.index - 1 } } : {}),
    rejected,
    ...(lastRejection
      ? {
          lastRejection: {
            index: lastRejection.index,
            code: lastRejection.error.code,
            message: lastRejection.error.message,
          },
        }
      : {}),
  };
}
