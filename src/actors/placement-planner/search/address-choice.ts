import type { NodeState, SocketLink } from './placement-input.js';
import {
  INTERFACE_TYPES,
  JACCL_COORDINATOR_PREFERENCE,
  preferenceRank,
  RING_HOST_PREFERENCE,
  type InterfaceType,
} from '../../../protocols/interface-types.js';

/**
 * Which of a neighbour's working addresses to use. Measured first: a link with a measured bandwidth always beats
 * one known only by its interface label. Labels decide only among unmeasured links, with exo's tables.
 */
export const RING_TYPE_PRIORITY: Readonly<Record<InterfaceType, number>> = priorities(RING_HOST_PREFERENCE);

/** The jaccl coordinator channel carries little data: it keeps exo's type preference, RTT breaks ties. */
export const COORDINATOR_TYPE_PRIORITY: Readonly<Record<InterfaceType, number>> =
  priorities(JACCL_COORDINATOR_PREFERENCE);

function priorities(order: readonly InterfaceType[]): Readonly<Record<InterfaceType, number>> {
  return Object.fromEntries(INTERFACE_TYPES.map((type) => [type, preferenceRank(order, type)])) as Record<
    InterfaceType,
    number
  >;
}

export interface AddressChoice {
  readonly ip: string;
  readonly type: InterfaceType;
  readonly measured: boolean;
  readonly bandwidthBps?: number;
  readonly rttMs?: number;
}

/** The type of the address a link reached: the link's own label, else the sink interface owning that IP. */
export function linkType(link: SocketLink, sink: NodeState | undefined): InterfaceType {
  if (link.type) return link.type;
  let found: InterfaceType = 'unknown';
  for (const iface of sink?.interfaces ?? []) if (iface.ip === link.ip) found = iface.type; // later duplicates win, as exo
  return found;
}

function toChoice(link: SocketLink, sink: NodeState | undefined): AddressChoice {
  const choice: { -readonly [K in keyof AddressChoice]: AddressChoice[K] } = {
    ip: link.ip,
    type: linkType(link, sink),
    measured: link.bandwidthBps !== undefined,
  };
  if (link.bandwidthBps !== undefined) choice.bandwidthBps = link.bandwidthBps;
  if (link.rttMs !== undefined) choice.rttMs = link.rttMs;
  return choice;
}

const rttOrInf = (c: AddressChoice): number => c.rttMs ?? Number.POSITIVE_INFINITY;

/** Orders two ring address candidates: negative when `a` is better. Stable sort keeps input order on full ties. */
export function compareRingChoices(a: AddressChoice, b: AddressChoice): number {
  if (a.measured !== b.measured) return a.measured ? -1 : 1;
  if (a.measured && b.measured && a.bandwidthBps !== b.bandwidthBps)
    return (b.bandwidthBps ?? 0) - (a.bandwidthBps ?? 0);
  if (!a.measured && RING_TYPE_PRIORITY[a.type] !== RING_TYPE_PRIORITY[b.type])
    return RING_TYPE_PRIORITY[a.type] - RING_TYPE_PRIORITY[b.type];
  const ra = rttOrInf(a),
    rb = rttOrInf(b);
  return ra === rb ? 0 : ra < rb ? -1 : 1;
}

function compareCoordinatorChoices(a: AddressChoice, b: AddressChoice): number {
  const d = COORDINATOR_TYPE_PRIORITY[a.type] - COORDINATOR_TYPE_PRIORITY[b.type];
  if (d !== 0) return d;
  const ra = rttOrInf(a),
    rb = rttOrInf(b);
  return ra === rb ? 0 : ra < rb ? -1 : 1;
}

/** Best address for ring traffic from the links source → sink; undefined when there is none. */
export function chooseRingAddress(
  links: readonly SocketLink[],
  sink: NodeState | undefined,
): AddressChoice | undefined {
  return links.map((l) => toChoice(l, sink)).sort(compareRingChoices)[0];
}

/** Best address by which a node reaches the jaccl coordinator (rank 0). */
export function chooseCoordinatorAddress(
  links: readonly SocketLink[],
  sink: NodeState | undefined,
): AddressChoice | undefined {
  return links.map((l) => toChoice(l, sink)).sort(compareCoordinatorChoices)[0];
}

/** Score base above every label score, so any measured hop outranks every unmeasured one. */
const MEASURED_BASE = 16;

/**
 * One comparable number per chosen address, used by the ring-order search (higher is better): measured links
 * score MEASURED_BASE + bits per second; unmeasured ones 1 (unknown) … 5 (thunderbolt) by the ring table.
 */
export function hopScore(choice: AddressChoice): number {
  if (choice.measured) return MEASURED_BASE + (choice.bandwidthBps ?? 0);
  return 5 - RING_TYPE_PRIORITY[choice.type];
}

/** Score of a hop that exists only as RDMA (jaccl): linked, but no socket address to compare. */
export const RDMA_ONLY_SCORE = 0;

/** Reverse of hopScore for explanations: the bandwidth a score stands for, when it was measured. */
export function scoreBandwidth(score: number): number | undefined {
  return score >= MEASURED_BASE ? score - MEASURED_BASE : undefined;
}
