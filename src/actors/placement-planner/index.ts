/** The placement planner's public surface (pure: state + request → plan or refusal). */
export {
  decodePlacementInput,
  type PlacementInput,
  type NodeState,
  type PlanLink,
  type SocketLink,
  type RdmaLink,
  type InterfaceType,
} from './search/placement-input.js';
export type { Link } from '../../protocols/link.js';
export {
  decodePlacementRequest,
  type PlacementRequest,
  type Workload,
  type Sharding,
  type Backend,
} from './search/placement-request.js';
export { planPlacement, type PlanOptions } from './search/plan-placement.js';
export { previewPlacements, type Preview } from './search/previews.js';
export {
  isRefusal,
  type Plan,
  type PlanResult,
  type Refusal,
  type Instance,
  type Shard,
  type Explanation,
} from './search/plan-result.js';
export { runPlacementTask, type PlacementTaskInput, type PlacementTaskOutput } from './pool-task.js';
