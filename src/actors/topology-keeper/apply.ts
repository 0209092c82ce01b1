/**
 * `applyEvent(state, indexed)`: the one way cluster state changes. Pure, never mutates its input, no clock and
 * no randomness (the envelope's `at` is only stored). The index must be exactly `lastIndex + 1` and the term
 * must not go backwards; otherwise it throws `EventOrderError` and the caller decides (buffer, re-request, drop).
 */
import { TorusError } from '../../protocols/errors.js';
import type { ClusterEvent, IndexedEvent } from '../../protocols/events.js';
import type { ClusterState } from './state.js';
import {
  applyLinkDown,
  applyLinkMeasured,
  applyLinkUp,
  applyNodeGone,
  applyNodeJoined,
  applyNodeProfileUpdated,
} from './apply-nodes.js';
import {
  applyInstanceCompleted,
  applyInstanceCreated,
  applyInstanceDeleted,
  applyInstanceFailed,
  applyInstanceNeedsReplacement,
  applyInstanceReplaced,
  applyRunnerStatusChanged,
  applyTaskCreated,
  applyTaskStatusChanged,
} from './apply-work.js';
import { applyArtifactDropped, applyArtifactHeld, dropNodeHoldings } from './apply-artifacts.js';
import { applyCalibrationRecorded, dropNodeCalibrations } from './apply-calibrations.js';

export type EventOrderProblem = 'gap' | 'stale' | 'term';

export class EventOrderError extends TorusError {
  readonly problem: EventOrderProblem;
  constructor(
    problem: EventOrderProblem,
    expected: { index: number; minTerm: number },
    got: { index: number; term: number },
  ) {
    super(
      problem === 'gap' ? 'TORUS_EVENT_OUT_OF_ORDER' : 'TORUS_EVENT_STALE',
      problem === 'term'
        ? `event ${got.index} has term ${got.term}, below the last applied term ${expected.minTerm}`
        : `event index ${got.index} where ${expected.index} was expected`,
      { problem, expectedIndex: expected.index, minTerm: expected.minTerm, index: got.index, term: got.term },
    );
    this.problem = problem;
  }
}

/** Throws EventOrderError unless `indexed` is the next entry for `state`. */
export function checkOrder(state: ClusterState, indexed: Pick<IndexedEvent, 'index' | 'term'>): void {
  const expected = { index: state.lastIndex + 1, minTerm: state.lastTerm };
  if (indexed.index > expected.index) throw new EventOrderError('gap', expected, indexed);
  if (indexed.index < expected.index) throw new EventOrderError('stale', expected, indexed);
  if (indexed.term < state.lastTerm) throw new EventOrderError('term', expected, indexed);
}

export function applyEvent(state: ClusterState, indexed: IndexedEvent): ClusterState {
  checkOrder(state, indexed);
  const next = applyClusterEvent(state, indexed.event, indexed.at);
  return { ...next, lastIndex: indexed.index, lastTerm: indexed.term };
}

/** Folds a run of consecutive events (throws at the first one out of order). */
export function applyEvents(state: ClusterState, events: Iterable<IndexedEvent>): ClusterState {
  let s = state;
  for (const e of events) s = applyEvent(s, e);
  return s;
}

function applyClusterEvent(state: ClusterState, event: ClusterEvent, at: number | undefined): ClusterState {
  switch (event.type) {
    case 'LeaderElected':
      return state; // only moves lastIndex/lastTerm: it exists so the new term can commit
    case 'NodeJoined':
      return applyNodeJoined(state, event, at);
    case 'NodeProfileUpdated':
      return applyNodeProfileUpdated(state, event, at);
    case 'NodeGone':
      return dropNodeCalibrations(dropNodeHoldings(applyNodeGone(state, event, at), event.nodeId), event.nodeId);
    case 'LinkUp':
      return applyLinkUp(state, event, at);
    case 'LinkMeasured':
      return applyLinkMeasured(state, event);
    case 'LinkDown':
      return applyLinkDown(state, event);
    case 'InstanceCreated':
      return applyInstanceCreated(state, event, at);
    case 'InstanceNeedsReplacement':
      return applyInstanceNeedsReplacement(state, event, at);
    case 'InstanceReplaced':
      return applyInstanceReplaced(state, event, at);
    case 'InstanceFailed':
      return applyInstanceFailed(state, event, at);
    case 'InstanceCompleted':
      return applyInstanceCompleted(state, event, at);
    case 'InstanceDeleted':
      return applyInstanceDeleted(state, event);
    case 'RunnerStatusChanged':
      return applyRunnerStatusChanged(state, event, at);
    case 'TaskCreated':
      return applyTaskCreated(state, event, at);
    case 'TaskStatusChanged':
      return applyTaskStatusChanged(state, event, at);
    case 'ArtifactHeld':
      return applyArtifactHeld(state, event, at);
    case 'ArtifactDropped':
      return applyArtifactDropped(state, event);
    case 'CalibrationRecorded':
      return applyCalibrationRecorded(state, event);
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}
