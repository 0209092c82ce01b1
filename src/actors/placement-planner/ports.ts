import type { Rng } from './rng.js';

export const EPHEMERAL_PORT_MIN = 49152;
export const EPHEMERAL_PORT_MAX = 65535;
/** exo's API port, which torus also avoids by default (the planner cannot see every node's API port). */
export const DEFAULT_RESERVED_PORTS: readonly number[] = [52415];

/** One port in 49152–65535 that is none of `reserved` (the nodes' API ports), drawn from the seeded RNG. */
export function chooseEphemeralPort(rng: Rng, reserved: readonly number[] = DEFAULT_RESERVED_PORTS): number {
  const avoid = [...new Set(reserved.filter((p) => p >= EPHEMERAL_PORT_MIN && p <= EPHEMERAL_PORT_MAX))].sort(
    (a, b) => a - b,
  );
  // Draw among the allowed ports only, then step over the reserved ones: uniform, no retry loop.
  let port = rng.int(EPHEMERAL_PORT_MIN, EPHEMERAL_PORT_MAX - avoid.length);
  for (const p of avoid) if (port >= p) port++;
  return port;
}
