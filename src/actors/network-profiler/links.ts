/** Pure helpers of the network profiler: link keys, profile change detection, peer targets from the topology. */
import type { DeviceInfo, InterfaceType, MemoryInfo, NetInterface, RunnerPolicy } from '../../protocols/events.js';
import type { PeerTarget } from './probes/reachability.js';
import type { Link } from '../../protocols/link.js';

/** This node's view of one of a peer's addresses: the one link type (protocols/link.ts) from here, with its probe port. */
export interface PeerLink extends Omit<Link, 'source'> {
  readonly type: InterfaceType;
  readonly port: number;
}

export interface Profile {
  readonly interfaces: readonly NetInterface[];
  readonly memory: MemoryInfo;
  /** The node's exec policy and runner quota, advertised with the profile (static for a process). */
  readonly runners?: RunnerPolicy;
  /** Memory bandwidth and compute (measured once at start, or declared by flags). */
  readonly device?: DeviceInfo;
}

/** Device figures differ enough to re-announce: a figure appears or goes, or a source or value changes. */
export function deviceChanged(a: DeviceInfo | undefined, b: DeviceInfo | undefined): boolean {
  // Field by field: the replicated copy may hold the same figures in another key order.
  const keys = ['memoryBandwidthGBps', 'gflops', 'memoryBandwidthSource', 'gflopsSource', 'measuredAt'] as const;
  return keys.some((k) => a?.[k] !== b?.[k]);
}

export const linkKey = (sink: string, ip: string): string => `${sink}|${ip}`;

/** Every (sink, ip) the targets name, so links of removed peers or addresses can be taken down. */
export function targetKeys(targets: readonly PeerTarget[]): Set<string> {
  const keys = new Set<string>();
  for (const t of targets) for (const a of t.addresses) keys.add(linkKey(t.nodeId, typeof a === 'string' ? a : a.ip));
  return keys;
}

/**
 * Peers that restarted (same id, another incarnation) between two target lists. The cluster state dropped every
 * link to and from such a peer when its new incarnation joined, while its addresses may still answer with the
 * same id, so their links must be forgotten here and found (LinkUp) and measured again.
 */
export function restartedPeers(before: readonly PeerTarget[], after: readonly PeerTarget[]): Set<string> {
  const old = new Map(before.map((p) => [p.nodeId, p.incarnation]));
  const out = new Set<string>();
  for (const p of after) {
    const was = old.get(p.nodeId);
    if (was !== undefined && p.incarnation !== undefined && was !== p.incarnation) out.add(p.nodeId);
  }
  return out;
}

export function sameTargets(a: readonly PeerTarget[], b: readonly PeerTarget[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Interfaces changed (re-probe, re-measure) — compared by name, type and addresses, not by order. */
export function interfacesChanged(a: readonly NetInterface[] | undefined, b: readonly NetInterface[]): boolean {
  const norm = (l: readonly NetInterface[]): string =>
    JSON.stringify([...l].map((i) => [i.name, i.type, [...i.ips].sort(), i.speedMbps ?? null]).sort());
  return a === undefined || norm(a) !== norm(b);
}

/** Memory moved enough to be worth an event: 5 % of RAM or 256 MiB, whichever is larger. */
export function memoryChanged(a: MemoryInfo | undefined, b: MemoryInfo): boolean {
  if (!a) return true;
  const threshold = Math.max(b.ramTotal * 0.05, 256 * 1024 * 1024);
  return (
    a.ramTotal !== b.ramTotal ||
    Math.abs(a.ramAvailable - b.ramAvailable) >= threshold ||
    (a.swapTotal ?? 0) !== (b.swapTotal ?? 0)
  );
}

/**
 * Probe targets from the topology keeper's `topology` answer: every other node with a profile, each IPv4 and
 * global IPv6 address of its interfaces with the interface type, on its API port. Unknown shapes are skipped.
 */
export function targetsFromTopology(answer: unknown, selfId: string): PeerTarget[] {
  const nodes = (answer as { nodes?: unknown })?.nodes;
  if (!Array.isArray(nodes)) return [];
  const out: PeerTarget[] = [];
  for (const n of nodes as Record<string, unknown>[]) {
    const id = n?.id,
      apiPort = n?.apiPort,
      incarnation = n?.incarnation;
    const ifaces = (n?.profile as { interfaces?: unknown } | undefined)?.interfaces;
    if (typeof id !== 'string' || id === selfId || typeof apiPort !== 'number' || !Array.isArray(ifaces)) continue;
    const addresses = (ifaces as NetInterface[]).flatMap((i) =>
      Array.isArray(i?.ips)
        ? i.ips
            .filter((ip) => typeof ip === 'string' && !/^(127\.|::1$|fe80:)/i.test(ip))
            .map((ip) => ({ ip, type: i.type }))
        : [],
    );
    if (addresses.length > 0)
      out.push({ nodeId: id, ...(typeof incarnation === 'number' ? { incarnation } : {}), port: apiPort, addresses });
  }
  return out.sort((a, b) => a.nodeId.localeCompare(b.nodeId));
}
