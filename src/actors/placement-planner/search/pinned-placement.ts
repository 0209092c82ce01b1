/**
 * A pinned placement (`nodes` in a placement request): the caller names the set and its ring order, rank 0
 * first; the planner does not choose them. It checks them as it checks its own choice (memory per set and per
 * node, layers, tensor divisibility, RDMA and a reachable coordinator for jaccl, a usable link each way on every
 * ring hop), splits the layers by memory, picks each direction's address and the port, and predicts the step;
 * or refuses with the reason. POST /v1/instances, the previews, `torus place|run --nodes` and the pipeline
 * bench's options all come here (docs/placement.md, "Pinned placement").
 */
import { TorusError } from '../../../protocols/errors.js';
import { coordinatorRoutes } from './jaccl.js';
import type { DropKind, RefusalKind } from './plan-result.js';
import { cheapChecks, modelStages, tensorSizeProblem, type Evaluated, type PlanningContext } from './select-set.js';

/** The pinned nodes the cluster has none of are a 404 naming them: the request was well formed, the state says no. */
export function checkPinnedNodesKnown(known: Iterable<string>, nodes: readonly string[]): void {
  const have = new Set(known);
  const unknown = nodes.filter((id) => !have.has(id));
  if (unknown.length > 0)
    throw new TorusError('TORUS_NODE_UNKNOWN', `not nodes of the cluster: ${unknown.join(', ')}`, { unknown });
}

export type PinnedOutcome =
  | { readonly ok: true; readonly e: Evaluated }
  | { readonly ok: false; readonly e: Evaluated; readonly kind: RefusalKind; readonly message: string };

/**
 * Checks the given ring order (global node indices, rank 0 first; every node known and with a memory figure,
 * which the early refusal has made sure of) and, when it fits, fills `e.split`, `e.ring` and `e.order` as a
 * search would have.
 */
export function evaluatePinned(ctx: PlanningContext, order: readonly number[]): PinnedOutcome {
  const { index, request } = ctx;
  const k = order.length;
  const names = order.map((m) => index.ids[m] as string);
  // Members in id order, as every set of a search: the layer split is per member, in this order.
  const members = [...order].sort((a, b) => a - b);
  const e = cheapChecks(ctx, k, members);
  const refuse = (kind: RefusalKind, why: string): PinnedOutcome => {
    // tensor divisibility is a property of the size, not of the set: the set is not evaluated further
    if (kind === 'tensor') e.notEvaluated = why;
    else e.dropped = { kind: kind as DropKind, why };
    return {
      ok: false,
      e,
      kind,
      message: `The pinned nodes ${names.join(', ')} cannot hold ${request.workload.id}: ${why}`,
    };
  };
  if (request.sharding === 'tensor' && k > 1) {
    const problem = tensorSizeProblem(request, k);
    if (problem) return refuse('tensor', problem);
  }
  if (e.dropped) return refuse(e.dropped.kind as RefusalKind, e.dropped.why);
  // Every ring hop in the given order needs a usable link each way (a ring of two has one hop).
  const n = index.n;
  const hops = k === 2 ? 1 : k;
  const missing: string[] = [];
  let bottleneck = Number.POSITIVE_INFINITY;
  let rttSum = 0;
  for (let i = 0; i < (k > 1 ? hops : 0); i++) {
    const a = order[i] as number,
      b = order[(i + 1) % k] as number;
    const score = index.hop[a * n + b] as number;
    if (score === Number.NEGATIVE_INFINITY) missing.push(`${index.ids[a]} ↔ ${index.ids[b]}`);
    bottleneck = Math.min(bottleneck, score);
    rttSum += (index.rtt[a * n + b] as number) * (k === 2 ? 2 : 1);
  }
  if (missing.length > 0)
    return refuse(
      'ring',
      `in this order the ring hop${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ${missing.length > 1 ? 'have' : 'has'} no usable link each way`,
    );
  if (request.backend === 'jaccl' && k > 1) {
    const routes = coordinatorRoutes(index, members, order[0] as number);
    if (!routes.ok)
      return refuse(
        'coordinator',
        `jaccl's coordinator is rank 0 (${names[0]}), and ${routes.node} has no socket link to it: put a node every other reaches first`,
      );
  }
  // A model's pipeline splits by its stages' real bytes in this order (the first and last stage weigh more).
  if (request.workload.modelBytes && (request.sharding === 'pipeline' || k === 1)) {
    const stages = modelStages(ctx, order);
    if ('short' in stages) return refuse('memory', stages.short);
  }
  e.ring = {
    order: order.map((m) => members.indexOf(m)),
    bottleneck,
    rttSum,
    method: k === 1 ? 'single' : 'pinned',
    thresholdsTried: 0,
  };
  e.order = [...order];
  e.chosen = true;
  return { ok: true, e };
}
