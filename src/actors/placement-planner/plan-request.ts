import { ValidationError } from '../../core/errors.js';
import { decodeClusterState, type ClusterState } from '../../core/placement/cluster-state.js';
import { decodePlacementRequest } from '../../core/placement/placement-request.js';
import type { PlacementTaskInput } from '../../core/placement/pool-task.js';
import type { PlanKind } from './machine.js';

/**
 * A `plan` or `preview` request body: `{type, state?, request, seed?}`, validated before any work starts.
 * `liveState` is the topology keeper's placement state, used when the body carries none.
 */
export interface PlannerRequest {
  readonly kind: PlanKind;
  readonly state: ClusterState;
  readonly input: PlacementTaskInput;
}

export function checkPlannerBody(body: Readonly<Record<string, unknown>>): void {
  for (const key of Object.keys(body)) {
    if (!['type', 'state', 'request', 'seed'].includes(key)) throw new ValidationError('body', key, 'unknown field (allowed: type, state, request, seed)');
  }
}

export function decodePlannerRequest(kind: PlanKind, body: Readonly<Record<string, unknown>>, fallbackSeed: () => number, reservedPorts: readonly number[], liveState?: unknown): PlannerRequest {
  checkPlannerBody(body);
  const rawState = body.state ?? liveState;
  if (rawState === undefined) throw new ValidationError('body', 'state', 'required: the cluster state to plan on (docs/placement.md)');
  const state = decodeClusterState(rawState, 'body', 'state');
  decodePlacementRequest(body.request, 'body', 'request');
  let seed: number;
  if (body.seed === undefined || body.seed === null) seed = fallbackSeed();
  else if (typeof body.seed === 'number' && Number.isInteger(body.seed) && body.seed >= 0 && body.seed <= 0xffffffff) seed = body.seed;
  else throw new ValidationError('body', 'seed', 'must be an integer from 0 to 4294967295');
  return { kind, state, input: { kind, state: rawState, request: body.request, seed, reservedPorts } };
}
