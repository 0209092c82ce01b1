/** The placement planner's public surface (pure: state + request → plan or refusal). */
export {
  decodeClusterState,
  type ClusterState,
  type NodeState,
  type Link,
  type SocketLink,
  type RdmaLink,
  type InterfaceType,
} from './cluster-state.js';
export {
  decodePlacementRequest,
  type PlacementRequest,
  type Workload,
  type Sharding,
  type Backend,
} from './placement-request.js';
export { planPlacement, type PlanOptions } from './plan-placement.js';
export { previewPlacements, type Preview } from './previews.js';
export {
  isRefusal,
  type Plan,
  type PlanResult,
  type Refusal,
  type Instance,
  type Shard,
  type Explanation,
} from './plan-result.js';
export { runPlacementTask, type PlacementTaskInput, type PlacementTaskOutput } from './pool-task.js';
