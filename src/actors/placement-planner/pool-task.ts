import { decodePlacementInput } from './search/placement-input.js';
import { decodePlacementRequest } from './search/placement-request.js';
import { planPlacement } from './search/plan-placement.js';
import type { PlanResult } from './search/plan-result.js';
import { previewPlacements, type Preview } from './search/previews.js';
import type { PortRange } from './search/ports.js';

/**
 * The CPU-pool task `placement.plan` (registered in src/runtime/cpu-tasks.ts): runs a plan or a preview in a
 * piscina worker so the planner actor stays responsive during large searches. Input is plain data; it is
 * decoded again here because it crossed a thread boundary.
 */
export interface PlacementTaskInput {
  readonly kind: 'plan' | 'preview';
  readonly state: unknown;
  readonly request: unknown;
  readonly seed: number;
  readonly reservedPorts?: readonly number[];
  readonly portRange?: PortRange;
}

export type PlacementTaskOutput = PlanResult | { readonly previews: readonly Preview[] };

export function runPlacementTask(input: PlacementTaskInput): PlacementTaskOutput {
  const state = decodePlacementInput(input.state);
  const request = decodePlacementRequest(input.request);
  const options = {
    seed: input.seed,
    ...(input.reservedPorts ? { reservedPorts: input.reservedPorts } : {}),
    ...(input.portRange ? { portRange: input.portRange } : {}),
  };
  return input.kind === 'preview'
    ? { previews: previewPlacements(state, request, options) }
    : planPlacement(state, request, options);
}

export default function placementPlanTask(input: PlacementTaskInput): PlacementTaskOutput {
  return runPlacementTask(input);
}
