/**
 * The planner's view of a workload's artifacts: per node, the fraction of the artifacts' bytes it holds
 * (verified chunks × chunk share of the bytes) becomes its `cached` fraction of the workload, and the artifacts'
 * total size goes into the request as `workload.artifactBytes`, so the plan explains how many bytes each choice
 * would move. An artifact no node holds is an error: nothing could ever deliver it.
 */
import { TorusError } from '../../../protocols/errors.js';
import type { PlacementState } from '../../topology-keeper/placement-state.js';
import type { ClusterState } from '../../topology-keeper/state.js';

export function withArtifactHoldings(
  placement: PlacementState,
  state: ClusterState,
  workloadId: string,
  artifactIds: readonly string[],
): { placement: PlacementState; artifactBytes: number } {
  const records = artifactIds.map((id) => {
    const r = state.artifacts && Object.hasOwn(state.artifacts, id) ? state.artifacts[id] : undefined;
    if (!r)
      throw new TorusError(
        'TORUS_ARTIFACT_UNKNOWN',
        `no node holds artifact ${id} (add it with \`torus artifacts add\`)`,
        { id },
      );
    return r;
  });
  const total = records.reduce((s, r) => s + r.bytes, 0);
  const heldBy = (node: string): number =>
    records.reduce((s, r) => {
      const h = Object.hasOwn(r.holders, node) ? r.holders[node] : undefined;
      return s + (h && r.chunks > 0 ? (h.have / r.chunks) * r.bytes : h ? r.bytes : 0);
    }, 0);
  const nodes = placement.nodes.map((n) => ({
    ...n,
    cached: { ...(n.cached ?? {}), [workloadId]: total > 0 ? Math.round((heldBy(n.id) / total) * 1e6) / 1e6 : 1 },
  }));
  return { placement: { ...placement, nodes }, artifactBytes: total };
}
