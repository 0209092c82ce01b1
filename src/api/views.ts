import { restartable } from '../actors/topology-keeper/restart-rule.js';
import type { ClusterState } from '../actors/topology-keeper/state.js';
import { instanceArtifacts } from '../artifacts/instance-progress.js';
import type { InstanceView, RunnerView, TopologyView } from './node-facade.js';

/**
 * Pure mappings from the topology keeper's replicated state (src/actors/topology-keeper/state.ts) to the API's views.
 * The node's facade and the in-process test facade both use them, so the views cannot drift between the two.
 */
export function topologyView(state: ClusterState, leaderId?: string): TopologyView {
  const role = (id: string): 'leader' | 'follower' | undefined =>
    leaderId === undefined ? undefined : id === leaderId ? 'leader' : 'follower';
  const nodes = Object.values(state.nodes)
    .map((n) => ({
      id: n.id,
      name: n.name,
      role: role(n.id),
      incarnation: n.incarnation,
      version: n.version,
      memory: n.profile
        ? { ramAvailable: n.profile.memory.ramAvailable, ramTotal: n.profile.memory.ramTotal }
        : undefined,
      interfaces: n.profile?.interfaces.flatMap((i) => i.ips.map((ip) => ({ name: i.name, ip, type: i.type }))),
      device: n.profile?.device,
      calibrations: state.calibrations?.[n.id],
    }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const links = state.links.map((l) => ({
    source: l.source,
    sink: l.sink,
    ip: l.ip,
    type: l.type,
    rttMs: l.rttMs,
    bandwidthBps: l.bandwidthBps,
    measuredAt: l.measuredAt,
  }));
  return { nodes, links, lastIndex: state.lastIndex };
}

export function instanceViews(state: ClusterState): InstanceView[] {
  return Object.keys(state.instances)
    .sort()
    .map((id) => instanceView(state, id))
    .filter((v): v is InstanceView => v !== undefined);
}

export function instanceView(state: ClusterState, id: string): InstanceView | undefined {
  if (!Object.hasOwn(state.instances, id)) return undefined;
  const record = state.instances[id];
  if (!record) return undefined;
  const { plan } = record;
  const runners: RunnerView[] = plan.nodes.map((node, rank) => {
    const r = Object.hasOwn(record.runners, node) ? record.runners[node] : undefined;
    return {
      node,
      rank,
      status: r?.status ?? 'Idle',
      reason: r?.reason,
      restarts: r?.attempt,
      exitCode: r?.exitCode,
      signal: r?.signal,
    };
  });
  // An exec instance is a job: running → completed (every rank exited 0) or failed (the first failing rank);
  // `restarting` while a failed job with restart policy on-failure waits to be re-placed as a group.
  const job =
    record.workload.kind === 'exec'
      ? {
          state:
            record.status === 'completed'
              ? ('completed' as const)
              : record.status === 'failed'
                ? restartable(record)
                  ? ('restarting' as const)
                  : ('failed' as const)
                : ('running' as const),
          exitCode: record.exitCode,
          signal: record.signal,
          failedRank: record.failedRank,
          failedNode: record.failedNode,
          restarts: record.restarts ?? 0,
        }
      : undefined;
  return {
    id,
    nodes: plan.nodes,
    runners,
    backend: plan.backend,
    sharding: plan.sharding,
    status: record.status,
    reason: record.reason,
    generation: record.generation,
    pinned: record.pinned,
    exitCode: record.exitCode,
    job,
    workload: record.workload,
    plan,
    // Where the workload's artifacts are on the placed nodes: runners start once their node holds them.
    // The workload's model too: per node its stage's layers and how far they have come.
    ...(record.workload.artifacts?.length || record.workload.model
      ? {
          artifacts: instanceArtifacts(
            state,
            [...(record.workload.artifacts ?? []), ...(record.workload.model ? [record.workload.model] : [])],
            plan.nodes,
            record.workload.model
              ? {
                  id: record.workload.model,
                  stages: Object.fromEntries(
                    plan.sharding === 'tensor'
                      ? []
                      : plan.shards.map((s) => [s.node, [s.startLayer, s.endLayer] as const]),
                  ),
                }
              : undefined,
          ),
        }
      : {}),
  };
}
