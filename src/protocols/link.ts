/**
 * The one link type, from measurement to placement: `source` reached `sink` at `ip` (one of sink's addresses), a
 * directed edge per working address, with what was measured over it. The profiler's view of a peer's address, the
 * replicated state's edge, the planner's input and its socket links are this shape (each adds only what it owns).
 */
import type { InterfaceType } from './interface-types.js';

export interface Link {
  readonly source: string;
  readonly sink: string;
  readonly ip: string;
  readonly type?: InterfaceType;
  /** round-trip time in milliseconds, measured */
  readonly rttMs?: number;
  /** bits per second, as iperf3 and the profiler report it */
  readonly bandwidthBps?: number;
  /** epoch ms of the measurement */
  readonly measuredAt?: number;
}
