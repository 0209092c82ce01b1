/**
 * The kinds of network interface a node reports, and the two preference orders the planner falls back on for a
 * link that has not been measured yet (exo's tables; a measured link always wins, docs/placement.md).
 */
export const INTERFACE_TYPES = ['thunderbolt', 'ethernet', 'wifi', 'maybe_ethernet', 'unknown'] as const;
export type InterfaceType = (typeof INTERFACE_TYPES)[number];

/** Ring traffic between neighbours: the fastest kind of cable first. */
export const RING_HOST_PREFERENCE: readonly InterfaceType[] = [
  'thunderbolt',
  'maybe_ethernet',
  'ethernet',
  'wifi',
  'unknown',
];

/** The jaccl coordinator channel carries little data: a plain, stable network first, point-to-point cables last. */
export const JACCL_COORDINATOR_PREFERENCE: readonly InterfaceType[] = [
  'ethernet',
  'wifi',
  'unknown',
  'maybe_ethernet',
  'thunderbolt',
];

/** Rank of `type` in a preference order: 0 is the most preferred. */
export function preferenceRank(order: readonly InterfaceType[], type: InterfaceType): number {
  return order.indexOf(type);
}
