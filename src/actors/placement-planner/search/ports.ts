import type { Rng } from './rng.js';

/** A band of ports, both ends included. */
export interface PortRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Where an instance's ports are drawn from by default: below every default ephemeral range (Linux 32768–60999,
 * macOS and Windows 49152–65535), the ports the kernel hands to outgoing connections, so a plan cannot collide
 * with a connection that happens to be open on a node when its runner binds. Also below the API's own port-0
 * pairs (20000–32000, api/listen.ts), so nodes sharing one machine do not take each other's ports.
 */
export const DEFAULT_INSTANCE_PORTS: PortRange = { min: 10_000, max: 19_999 };
/** exo's API port, which torus also avoids (the planner cannot see every node's API port). */
export const DEFAULT_RESERVED_PORTS: readonly number[] = [52415];

/** `MIN-MAX` as a PortRange, or why not: ports 1024–65535, at least two of them (the port and the next). */
export function parsePortRange(text: string): PortRange | string {
  const m = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  if (!m)
    return `expected MIN-MAX (e.g. ${DEFAULT_INSTANCE_PORTS.min}-${DEFAULT_INSTANCE_PORTS.max}), got ${JSON.stringify(text)}`;
  const min = Number(m[1]);
  const max = Number(m[2]);
  if (min < 1024 || max > 65535) return `ports must lie in 1024-65535, got ${min}-${max}`;
  if (max - min < 1)
    return `the range needs at least two ports (an instance uses its port and the next), got ${min}-${max}`;
  return { min, max };
}

/** Whether two bands share a port. */
export function rangesOverlap(a: PortRange, b: PortRange): boolean {
  return a.min <= b.max && b.min <= a.max;
}

/**
 * An instance's port, drawn from the seeded RNG within `range`: the port and the next one (the coordinator's,
 * runner-supervisor/exec-env.ts) both lie in the range and neither is one of `reserved` (the nodes' API ports).
 * Undefined when no such port is left.
 */
export function chooseInstancePort(
  rng: Rng,
  range: PortRange = DEFAULT_INSTANCE_PORTS,
  reserved: readonly number[] = DEFAULT_RESERVED_PORTS,
): number | undefined {
  const last = range.max - 1; // the highest port whose successor is still in the range
  // A reserved port r rules out r (as the port) and r - 1 (whose successor is r).
  const avoid = [...new Set(reserved.flatMap((r) => [r - 1, r]).filter((p) => p >= range.min && p <= last))].sort(
    (a, b) => a - b,
  );
  const allowed = last - range.min + 1 - avoid.length;
  if (allowed <= 0) return undefined;
  // Draw among the allowed ports only, then step over the excluded ones: uniform, no retry loop.
  let port = rng.int(range.min, range.min + allowed - 1);
  for (const p of avoid) if (port >= p) port++;
  return port;
}
