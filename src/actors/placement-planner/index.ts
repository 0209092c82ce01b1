/** The placement planner's public surface (pure: state + request → plan or refusal). */
import { decodePlacementInput, type PlacementInput } from './cluster-state.js';
export {
  decodePlacementInput,
  type PlacementInput,
  type NodeState,
  type PlanLink,
  type SocketLink,
  type RdmaLink,
  type InterfaceType,
} from './cluster-state.js';
export type { Link } from '../../protocols/link.js';
/** @deprecated the planner's input is `PlacementInput` (one `ClusterState`: the replicated state's). */
export type ClusterState = PlacementInput;
/** @deprecated `decodePlacementInput`. */
export const decodeClusterState = decodePlacementInput;
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
