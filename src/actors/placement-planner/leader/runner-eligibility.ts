/**
 * Which nodes may hold a runner of a workload, decided by the leader before planning from what each
 * node advertises in its profile: its exec policy (an `exec` workload goes only to nodes that allow the command)
 * and its runner quota (a node already holding `maxRunners` live instances is full). The runner supervisor checks
 * the same again at spawn time; this only keeps plans off nodes that would refuse, and says why.
 */
import type { WorkloadSpec } from '../../../protocols/events.js';
import { execDecision } from '../../../protocols/exec-policy.js';
import type { PlacementState } from '../../topology-keeper/placement-state.js';
import type { ClusterState, InstanceRecord } from '../../topology-keeper/state.js';

export interface Exclusion {
  readonly node: string;
  readonly reason: string;
}

/** An instance that holds runners: live (a finished or failed one holds none). */
export const holdsRunners = (record: InstanceRecord): boolean =>
  record.status === 'active' || record.status === 'needs-replacement';

/** Nodes that cannot take a runner of `workload`, in id order. `ignore`: an instance being re-placed (its own runners). */
export function ineligibleNodes(state: ClusterState, workload: WorkloadSpec, ignore?: string): Exclusion[] {
  const held = new Map<string, number>();
  for (const [id, record] of Object.entries(state.instances)) {
    if (id === ignore || !holdsRunners(record)) continue;
    for (const node of record.plan.nodes) held.set(node, (held.get(node) ?? 0) + 1);
  }
  const out: Exclusion[] = [];
  for (const id of Object.keys(state.nodes).sort()) {
    const node = state.nodes[id]!;
    const policy = node.profile?.runners;
    const label = node.name && node.name !== id ? `${id} (${node.name})` : id;
    if (workload.kind === 'exec') {
      if (!policy) {
        out.push({
          node: id,
          reason: `${label} has not advertised an exec policy (no profile yet, or an older version): exec refused`,
        });
        continue;
      }
      const decision = execDecision(policy.allowExec, workload.command);
      if (!decision.allowed) {
        out.push({ node: id, reason: `${label} refuses exec: ${decision.rule}` });
        continue;
      }
    }
    const count = held.get(id) ?? 0;
    if (policy && count >= policy.maxRunners)
      out.push({
        node: id,
        reason: `${label} is at its runner quota (${count} of ${policy.maxRunners}, --max-runners)`,
      });
  }
  return out;
}

/** The planner's input without the excluded nodes and their links. */
export function withoutNodes(state: PlacementState, excluded: readonly Exclusion[]): PlacementState {
  if (excluded.length === 0) return state;
  const drop = new Set(excluded.map((e) => e.node));
  return {
    nodes: state.nodes.filter((n) => !drop.has(n.id)),
    links: state.links.filter((l) => !drop.has(l.source) && !drop.has(l.sink)),
  };
}
