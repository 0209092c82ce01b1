/** The topology keeper's public surface: the replicated state's shape, the pure fold over events, its digest and snapshot codec. */
export {
  emptyState,
  type ClusterState,
  type NodeRecord,
  type NodeProfile,
  type LinkRecord,
  type InstanceRecord,
  type RunnerRecord,
  type TaskRecord,
  type InstanceStatus,
} from './state.js';
export { applyEvent, applyEvents, EventOrderError } from './apply.js';
export { stateDigest } from './digest.js';
export { encodeSnapshot, decodeSnapshot, type StateSnapshot } from './snapshot.js';
export { toPlacementState } from './placement-state.js';
