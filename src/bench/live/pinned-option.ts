/**
 * One given placement option for the pipeline bench (`nodes` in POST /v1/bench/pipeline): the set and its ring
 * order are the caller's, everything else is the planner's. The planner plans on exactly that set (the live
 * state cut to it, every node required), which gives the layer split, port and feasibility checks of a real
 * placement; the ranks are then put in the given order, each dialling its neighbours at the address the planner
 * would choose for that direction. So a benchmark can measure every feasible option, not only the chosen one.
 */
import { indexCluster } from '../../actors/placement-planner/cluster-index.js';
import { decodePlacementInput } from '../../actors/placement-planner/cluster-state.js';
import { ringHostsByNode } from '../../actors/placement-planner/hosts-by-node.js';
import type { PlacementTaskOutput } from '../../actors/placement-planner/pool-task.js';
import type { PlacementState } from '../../actors/topology-keeper/placement-state.js';
import { TorusError, ValidationError } from '../../protocols/errors.js';
import type { InstancePlan } from '../../protocols/instance-plan.js';

/**
 * Pure checks of a pinned order against the live state, before anything changes: a node the cluster does not
 * have is a 404 (the request's shape was right, the cluster's state says no, as for the ring bench), a node
 * given twice a 400 naming `nodes[i]`.
 */
export function checkPinnedNodes(live: PlacementState, nodes: readonly string[]): void {
  const known = new Set(live.nodes.map((n) => n.id));
  const unknown = nodes.filter((id) => !known.has(id));
  if (unknown.length > 0)
    throw new TorusError('TORUS_NODE_UNKNOWN', `not nodes of the cluster: ${unknown.join(', ')}`, { unknown });
  nodes.forEach((id, i) => {
    if (nodes.indexOf(id) !== i) throw new ValidationError('body', `nodes[${i}]`, `${id} is given twice`);
  });
}

/** The state the planner sees for a pinned option: only those nodes and the links between them. */
export function restrictState(live: PlacementState, nodes: readonly string[]): PlacementState {
  const keep = new Set(nodes);
  return {
    nodes: live.nodes.filter((n) => keep.has(n.id)),
    links: live.links.filter((l) => keep.has(l.source) && keep.has(l.sink)),
  };
}

/**
 * The planner's plan on the set, put in the given ring order: the same layer counts per node (the split follows
 * memory, not order), consecutive ranges in the new rank order, and a ring hostfile for that order.
 */
export function reorderPlan(plan: InstancePlan, live: PlacementState, order: readonly string[]): InstancePlan {
  const index = indexCluster(decodePlacementInput(live), 'ring');
  const count = new Map(plan.shards.map((s) => [s.node, s.endLayer - s.startLayer]));
  let start = 0;
  const shards = order.map((node, rank) => {
    const layers = count.get(node) ?? 0;
    const shard = { node, rank, worldSize: order.length, startLayer: start, endLayer: start + layers };
    start += layers;
    return shard;
  });
  const addressOf = (from: string, to: string): string =>
    index.ringChoice[(index.indexOf.get(from) as number) * index.n + (index.indexOf.get(to) as number)]?.ip ?? '';
  const { meshAddresses: _mesh, ...rest } = plan;
  return {
    ...rest,
    nodes: [...order],
    shards,
    ...(order.length > 1 ? { hostsByNode: ringHostsByNode(order, plan.port, addressOf) } : {}),
  };
}

/** Asks the planner for the pinned set; a refusal (memory, no ring) is a 409 with the planner's reason. */
export async function planPinned(
  ask: (body: {
    type: 'plan';
    state: PlacementState;
    request: Record<string, unknown>;
  }) => Promise<PlacementTaskOutput>,
  live: PlacementState,
  order: readonly string[],
  request: Record<string, unknown>,
): Promise<InstancePlan> {
  checkPinnedNodes(live, order);
  const result = await ask({
    type: 'plan',
    state: restrictState(live, order),
    request: { ...request, minNodes: order.length, requiredNodes: [...order] },
  });
  if ('refusal' in result)
    throw new TorusError(
      'TORUS_PLACEMENT_REFUSED',
      `the given option cannot hold the workload: ${result.refusal.message}`,
      {
        kind: result.refusal.kind,
      },
    );
  if (!('instance' in result)) throw new TorusError('TORUS_INTERNAL', 'the planner answered without a plan');
  const plan = result.instance as InstancePlan;
  if (plan.nodes.length !== order.length)
    throw new TorusError('TORUS_INTERNAL', `the planner placed ${plan.nodes.length} nodes, ${order.length} were given`);
  return reorderPlan(plan, live, order);
}
