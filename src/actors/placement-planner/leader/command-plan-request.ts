/**
 * How a command's workload and options become the planner's request, and what of them an instance keeps so that a
 * re-placement plans the same way.
 */
import type { WorkloadSpec } from '../../../protocols/events.js';

/** The workload fields the planner reads (sizes and the cost description). */
const PLACED_WORKLOAD_KEYS = [
  'id',
  'memoryBytes',
  'layers',
  'hiddenSize',
  'kvHeads',
  'supportsTensor',
  'bytesPerLayer',
  'activationBytesPerToken',
  'flopsPerTokenPerLayer',
  'tokensPerStep',
  'returnBytesPerStep',
  'contextTokens',
  'kvBytesPerTokenPerLayer',
  'framework',
] as const;

export function planRequestFor(
  workload: WorkloadSpec,
  options: {
    sharding?: string | undefined;
    backend?: string | undefined;
    minNodes?: number | undefined;
    requiredNodes?: readonly string[] | undefined;
    objective?: string | undefined;
    nodes?: readonly string[] | undefined;
  },
): Record<string, unknown> {
  const { kind: _kind, ...rest } = workload as WorkloadSpec & Record<string, unknown>;
  const placementWorkload: Record<string, unknown> = {};
  for (const key of PLACED_WORKLOAD_KEYS) if (rest[key] !== undefined) placementWorkload[key] = rest[key];
  return {
    workload: placementWorkload,
    sharding: options.sharding ?? 'pipeline',
    backend: options.backend ?? 'ring',
    ...(options.minNodes !== undefined ? { minNodes: options.minNodes } : {}),
    ...(options.requiredNodes !== undefined ? { requiredNodes: options.requiredNodes } : {}),
    ...(options.objective !== undefined ? { objective: options.objective } : {}),
    ...(options.nodes !== undefined ? { nodes: options.nodes } : {}),
  };
}

/** What a placement was planned under, kept on the instance so that a re-placement plans the same way. */
export function compactConstraints(from: {
  minNodes?: number | undefined;
  requiredNodes?: readonly string[] | undefined;
  objective?: 'latency' | 'throughput' | undefined;
}): { minNodes?: number; requiredNodes?: readonly string[]; objective?: 'latency' | 'throughput' } {
  return {
    ...(from.minNodes !== undefined ? { minNodes: from.minNodes } : {}),
    ...(from.requiredNodes !== undefined ? { requiredNodes: from.requiredNodes } : {}),
    ...(from.objective !== undefined ? { objective: from.objective } : {}),
  };
}
