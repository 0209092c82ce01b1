import { ValidationError } from '../../protocols/errors.js';
import { decodePlacementInput, type PlacementInput } from './search/placement-input.js';
import { decodePlacementRequest } from './search/placement-request.js';
import { checkPinnedNodesKnown } from './search/pinned-placement.js';
import type { PlacementTaskInput } from './pool-task.js';
import type { PortRange } from './search/ports.js';
import { compile, StringEnum, Type, type Shape } from '../../protocols/schema-kit.js';
import type { PlanKind } from './machine.js';

/**
 * A `plan` or `preview` request body: `{type, state?, request, seed?}`, validated before any work starts.
 * `liveState` is the topology keeper's placement state, used when the body carries none.
 */
export interface PlannerRequest {
  readonly kind: PlanKind;
  readonly state: PlacementInput;
  readonly input: PlacementTaskInput;
}

/**
 * The body's envelope: `state` and `request` are read by their own decoders (src/actors/placement-planner), which name
 * their fields (`state.nodes[0].memory`); the seed defaults to a random one when absent or null.
 */
export const PlannerBody = Type.Object(
  {
    type: Type.Optional(StringEnum(['plan', 'preview'])),
    state: Type.Optional(
      Type.Unknown({ description: 'the cluster state to plan on (docs/placement.md); absent: the live one' }),
    ),
    request: Type.Unknown({ description: 'the placement request (docs/placement.md)' }),
    seed: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: 0xffffffff }), Type.Null()], {
        description: 'an integer from 0 to 4294967295',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PlannerBody = Shape<typeof PlannerBody>;
// API words (`is not a known field`, TORUS_API_VALIDATION) with the field named from the body's root, as before.
const bodyCodec = compile(PlannerBody, 'body');

export function checkPlannerBody(body: unknown): PlannerBody {
  return bodyCodec.decode(body);
}

export function decodePlannerRequest(
  kind: PlanKind,
  raw: unknown,
  fallbackSeed: () => number,
  ports: { readonly reservedPorts: readonly number[]; readonly portRange?: PortRange },
  liveState?: unknown,
): PlannerRequest {
  const body = checkPlannerBody(raw);
  const rawState = body.state ?? liveState;
  if (rawState === undefined)
    throw new ValidationError('body', 'state', 'required: the cluster state to plan on (docs/placement.md)');
  const state = decodePlacementInput(rawState, 'body', 'state');
  const request = decodePlacementRequest(body.request, 'body', 'request');
  if (request.nodes)
    checkPinnedNodesKnown(
      state.nodes.map((n) => n.id),
      request.nodes,
    );
  const seed = body.seed ?? fallbackSeed();
  return { kind, state, input: { kind, state: rawState, request: body.request, seed, ...ports } };
}
