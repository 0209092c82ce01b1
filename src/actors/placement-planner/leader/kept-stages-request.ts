/**
 * The leader's side of keeping a model pipeline's surviving stages (kept-stages.ts, docs/placement.md "Re-placing
 * a model pipeline"): which instances qualify, the `keepStages` their re-placement asks the planner for, and the
 * reason the instance then carries.
 */
import type { InstancePlan } from '../../../protocols/events.js';
import type { ClusterState, InstanceRecord } from '../../topology-keeper/state.js';
import type { KeepStages } from '../search/placement-request.js';

/**
 * The stages to keep when re-placing `record`: a model pipeline (its record still in the state, so stages weigh
 * their real bytes), not pinned, that lost some of its nodes and kept at least one. Otherwise undefined: the
 * re-placement plans afresh as before.
 */
export function keptStagesOf(record: InstanceRecord, state: ClusterState): KeepStages | undefined {
  const model = record.workload.model;
  if (record.pinned || model === undefined || record.plan.sharding !== 'pipeline') return undefined;
  if (!state.artifacts?.[model]?.model) return undefined;
  const shards = [...record.plan.shards].sort((a, b) => a.rank - b.rank);
  // Only a pipeline whose ranks hold consecutive layer ranges from 0 is a split that can be kept.
  let next = 0;
  for (const s of shards) {
    if (s.startLayer !== next || s.endLayer < s.startLayer) return undefined;
    next = s.endLayer;
  }
  const nodes = shards.map((s) => (Object.hasOwn(state.nodes, s.node) ? s.node : null));
  if (nodes.every((n) => n !== null) || nodes.every((n) => n === null)) return undefined;
  return { nodes, layers: shards.map((s) => s.endLayer - s.startLayer) };
}

/** What the re-placement did, for the instance's reason: the survivors that kept their stages, where the lost went. */
export function keptStagesReason(keep: KeepStages, plan: InstancePlan): string {
  const shards = [...plan.shards].sort((a, b) => a.rank - b.rank);
  const range = (s: { startLayer: number; endLayer: number }): string => `layers ${s.startLayer}-${s.endLayer - 1}`;
  const kept = shards.filter((_, r) => keep.nodes[r] !== null).map((s) => s.node);
  const moved = shards.filter((_, r) => keep.nodes[r] === null).map((s) => `${range(s)} to ${s.node}`);
  return `kept the stages of ${kept.join(', ')}; re-placed ${moved.join(', ')}`;
}
