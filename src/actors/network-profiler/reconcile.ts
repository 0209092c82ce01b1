/**
 * Reconciliation of what this profiler knows with the replicated state (pure; the worker calls it on every
 * topology poll while idle). The profiler only emits *changes*, so whenever the replicated state loses its facts
 * without the profiler seeing a change, they were never sent again. Found end to end: after a partition healed,
 * the merged cluster adopted the isolated leader's state, in which the other nodes had been NodeGone and came
 * back by NodeJoined without their profile and without their links; nothing re-sent them (1 link of 6, for good).
 * The same happens to a node declared gone during a long pause, or after any snapshot that lacks our facts.
 *
 * Returns the events to propose again: our profile when the state lacks it (or holds other interfaces); LinkUp
 * (+ LinkMeasured with the stored sample) for our links the state lacks, when their sink is a known node;
 * LinkMeasured when the state has the link unmeasured or holds an older sample than ours (a proposal lost on
 * the way, say a forward to the leader that timed out under load: the profiler emits each sample once, so the
 * state would keep the older one until the link is measured again); LinkDown for state links of ours we no
 * longer have.
 */
import type { LinkDown, LinkMeasured, LinkUp, NodeProfileUpdated } from '../../protocols/events.js';
import { deviceChanged, interfacesChanged, linkKey, type PeerLink, type Profile } from './links.js';
import type { ProfilerEmitted } from './machine.js';

export interface ReconcileInput {
  readonly nodeId: string;
  readonly incarnation: number | undefined;
  readonly links: Readonly<Record<string, PeerLink>>;
  readonly profile: Profile | undefined;
}

interface StateNode {
  id?: unknown;
  incarnation?: unknown;
  profile?: { interfaces?: unknown; runners?: unknown; device?: unknown };
}
interface StateLink {
  source?: unknown;
  sink?: unknown;
  ip?: unknown;
  bandwidthBps?: unknown;
  measuredAt?: unknown;
}

export function reconcileWithState(answer: unknown, me: ReconcileInput): ProfilerEmitted[] {
  const nodes = (answer as { nodes?: unknown })?.nodes;
  const links = (answer as { links?: unknown })?.links;
  if (!Array.isArray(nodes) || !Array.isArray(links)) return [];
  const self = (nodes as StateNode[]).find((n) => n?.id === me.nodeId);
  // Not joined yet, or the state still holds another incarnation of us: our facts would be ignored anyway.
  if (!self || (me.incarnation !== undefined && self.incarnation !== me.incarnation)) return [];
  const inc = me.incarnation !== undefined ? { sourceIncarnation: me.incarnation } : {};
  const out: ProfilerEmitted[] = [];

  const stateIfaces = self.profile?.interfaces;
  const policyDiffers = JSON.stringify(self.profile?.runners) !== JSON.stringify(me.profile?.runners);
  if (
    me.profile &&
    (!Array.isArray(stateIfaces) ||
      interfacesChanged(stateIfaces as Profile['interfaces'], me.profile.interfaces) ||
      policyDiffers ||
      deviceChanged(self.profile?.device as Profile['device'], me.profile.device))
  ) {
    const e: NodeProfileUpdated = {
      type: 'NodeProfileUpdated',
      nodeId: me.nodeId,
      ...(me.incarnation !== undefined ? { incarnation: me.incarnation } : {}),
      interfaces: me.profile.interfaces,
      memory: me.profile.memory,
      ...(me.profile.runners ? { runners: me.profile.runners } : {}),
      ...(me.profile.device ? { device: me.profile.device } : {}),
    };
    out.push(e);
  }

  const known = new Set((nodes as StateNode[]).map((n) => n?.id).filter((id): id is string => typeof id === 'string'));
  const ours = new Map<string, StateLink>();
  for (const l of links as StateLink[]) {
    if (l?.source === me.nodeId && typeof l.sink === 'string' && typeof l.ip === 'string')
      ours.set(linkKey(l.sink, l.ip), l);
  }
  for (const [key, l] of Object.entries(me.links)) {
    const inState = ours.get(key);
    const measured: LinkMeasured | undefined =
      l.bandwidthBps !== undefined && l.rttMs !== undefined && l.measuredAt !== undefined
        ? {
            type: 'LinkMeasured',
            source: me.nodeId,
            sink: l.sink,
            ip: l.ip,
            rttMs: l.rttMs,
            bandwidthBps: l.bandwidthBps,
            measuredAt: l.measuredAt,
            ...inc,
          }
        : undefined;
    if (!inState) {
      if (!known.has(l.sink)) continue; // a fact about an unknown node changes nothing; the peers poll drops it
      const up: LinkUp = { type: 'LinkUp', source: me.nodeId, sink: l.sink, ip: l.ip, linkType: l.type, ...inc };
      out.push(up);
      if (measured) out.push(measured);
    } else if (
      measured &&
      (typeof inState.bandwidthBps !== 'number' ||
        typeof inState.measuredAt !== 'number' ||
        inState.measuredAt < measured.measuredAt)
    ) {
      out.push(measured);
    }
  }
  for (const [key, l] of ours) {
    if (me.links[key]) continue;
    const down: LinkDown = {
      type: 'LinkDown',
      source: me.nodeId,
      sink: l.sink as string,
      ip: l.ip as string,
      reason: 'not seen by its source any more',
      ...inc,
    };
    out.push(down);
  }
  return out;
}
