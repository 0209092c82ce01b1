import type { PlacementInput } from './placement-input.js';
import type { Backend, PlacementRequest, Sharding } from './placement-request.js';
import { planPlacement, type PlanOptions } from './plan-placement.js';
import { isRefusal, type Plan, type Refusal } from './plan-result.js';
import { BACKENDS, SHARDINGS } from '../../../protocols/placement-kinds.js';

/** One option of a preview: a plan for exactly `nodeCount` nodes with that sharding and backend, or why not. */
export type Preview =
  | { readonly sharding: Sharding; readonly backend: Backend; readonly nodeCount: number; readonly plan: Plan }
  | { readonly sharding: Sharding; readonly backend: Backend; readonly nodeCount: number; readonly refusal: Refusal };

/**
 * Every option at once, as exo's placement previews: pipeline/tensor × ring/jaccl × each node count from the
 * request's minimum to the cluster size, each planned with the same seed. A single-node option is always
 * planned as pipeline + ring (the plan's instance says so); the request's own sharding and backend are ignored.
 * With pinned `nodes`, every option is that set in that order.
 */
export function previewPlacements(
  state: PlacementInput,
  request: PlacementRequest,
  options: Omit<PlanOptions, 'sizes'>,
): Preview[] {
  const out: Preview[] = [];
  const low = Math.max(request.minNodes, request.requiredNodes.length, 1);
  // A pinned set has one size: its own (each sharding × backend is still planned on it).
  const high = request.nodes ? low : Math.max(low, state.nodes.length);
  for (const sharding of SHARDINGS) {
    for (const backend of BACKENDS) {
      for (let nodeCount = low; nodeCount <= high; nodeCount++) {
        const result = planPlacement(
          state,
          { ...request, sharding, backend, minNodes: nodeCount },
          { ...options, sizes: [nodeCount] },
        );
        out.push(
          isRefusal(result)
            ? { sharding, backend, nodeCount, refusal: result.refusal }
            : { sharding, backend, nodeCount, plan: result },
        );
      }
    }
  }
  return out;
}
