/**
 * Bridges from cluster state to the placement planner's input (the `plan` command's state JSON, docs/placement.md) and to re-placement.
 */
import type { InterfaceType } from '../../protocols/events.js';
import { cmp, compact, own, type ClusterState, type InstanceRecord, type NodeCalibrations } from './state.js';
import { listNodes } from './graph.js';
import { restartable } from './restart-rule.js';
import type { Link } from '../../protocols/link.js';

export interface PlacementNode {
  readonly id: string;
  /** absent until the node's profile arrives (the planner then keeps it out of every plan, with a reason) */
  readonly memory?: { readonly ramAvailable: number; readonly ramTotal: number };
  readonly interfaces: readonly { readonly name: string; readonly ip: string; readonly type: InterfaceType }[];
  readonly rdmaEnabled?: boolean;
  readonly cached?: Readonly<Record<string, number>>;
  readonly device?: { readonly memoryBandwidthGBps?: number; readonly gflops?: number };
  /** framework → the figures a calibration measured (docs/placement.md, "Calibrated figures") */
  readonly calibrations?: NodeCalibrations;
}
export interface PlacementState {
  readonly nodes: readonly PlacementNode[];
  readonly links: readonly Link[];
}

/**
 * Every node, in id order, one interface entry per (interface, address); a node without a profile yet has no
 * memory figure and no interfaces (it still counts for the leaf rule, which looks at the whole cluster).
 */
export function toPlacementState(state: ClusterState): PlacementState {
  const nodes = listNodes(state).map((node): PlacementNode => {
    const profile = node.profile;
    if (!profile) return { id: node.id, interfaces: [] };
    return compact({
      id: node.id,
      memory: { ramAvailable: profile.memory.ramAvailable, ramTotal: profile.memory.ramTotal },
      interfaces: profile.interfaces.flatMap((i) => i.ips.map((ip) => ({ name: i.name, ip, type: i.type }))),
      rdmaEnabled: profile.rdmaEnabled,
      cached: profile.cached,
      device: profile.device
        ? compact({ memoryBandwidthGBps: profile.device.memoryBandwidthGBps, gflops: profile.device.gflops })
        : undefined,
      calibrations: state.calibrations ? own(state.calibrations, node.id) : undefined,
    });
  });
  const links = state.links.map((l) =>
    compact({
      source: l.source,
      sink: l.sink,
      ip: l.ip,
      type: l.type,
      rttMs: l.rttMs,
      bandwidthBps: l.bandwidthBps,
    }),
  );
  return { nodes, links };
}

export interface ReplacementNeed {
  readonly instanceId: string;
  readonly reason: string;
  /** nodes of the current plan that are no longer in the cluster */
  readonly lostNodes: readonly string[];
  /** nodes of the current plan still present (candidates to keep) */
  readonly remainingNodes: readonly string[];
  readonly instance: InstanceRecord;
}

/**
 * Instances to re-place: those marked `needs-replacement`, and active ones with a node that is no longer in the
 * cluster (defensive: NodeGone marks them, but a state installed from an older snapshot might not). Id order.
 */
export function instancesToReplace(state: ClusterState): ReplacementNeed[] {
  const out: ReplacementNeed[] = [];
  for (const id of Object.keys(state.instances).sort(cmp)) {
    const instance = state.instances[id]!;
    const lostNodes = instance.plan.nodes.filter((n) => !Object.hasOwn(state.nodes, n));
    if (instance.status === 'completed') continue;
    // A failed job whose restart policy allows another run is restarted as a whole group (re-placed).
    if (instance.status === 'failed' && !restartable(instance)) continue;
    if (instance.status === 'active' && lostNodes.length === 0) continue;
    const reason = instance.reason ?? `nodes left: ${lostNodes.join(', ')}`;
    out.push({
      instanceId: id,
      reason,
      lostNodes,
      remainingNodes: instance.plan.nodes.filter((n) => !lostNodes.includes(n)),
      instance,
    });
  }
  return out;
}
