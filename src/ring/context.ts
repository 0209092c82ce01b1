/** The contract between the communicator and the collective implementations, and abort-frame errors. */
import { TorusError } from '../protocols/errors.js';
import type { KernelMemory, Reducer, Region } from '../native/kernels/index.js';
import type { AbortFrame, RingOpName } from '../protocols/ring-frames.js';
import type { LaneIO } from './algorithms.js';
import type { LanePlan } from './layout.js';
import type { OpRun } from './op-run.js';
import type { ResolvedOptions } from './options.js';
import { describePeer, type Conn } from './peer-links.js';

export interface LaneHeader {
  readonly op: RingOpName;
  readonly dtype: number;
  readonly param: number;
  readonly bytes: number;
}

/** What the collective implementations (collectives.ts) need from the communicator. */
export interface RingContext {
  readonly rank: number;
  readonly n: number;
  readonly options: ResolvedOptions;
  readonly memory: KernelMemory;
  readonly reducer: Reducer;
  begin(name: string): OpRun;
  lane(run: OpRun, plan: LanePlan, header: LaneHeader, sends: boolean, receives: boolean): LaneIO;
  /** Sends on / receives from a given neighbour connection outside the lane pairing (send/recv). */
  link(kind: 'writeRight' | 'writeLeft' | 'readLeft' | 'readRight', index: number): Conn;
  openWrite(run: OpRun, conn: Conn, header: LaneHeader): void;
  /** Sends payload on a connection opened with openWrite (joins a pending header to a small payload). */
  write(run: OpRun, conn: Conn, bytes: Uint8Array): void;
  openRead(run: OpRun, conn: Conn, header: LaneHeader): void;
  finish(run: OpRun): Promise<void>;
  /** A cached kernel-memory region of at least `bytes` for a named use. */
  scratch(slot: string, bytes: number): Region;
}

export function abortError(frame: AbortFrame, options: ResolvedOptions): TorusError {
  const who = describePeer(options.hosts, frame.culprit);
  const by = `rank ${frame.reporter}`;
  if (frame.reason === 'timeout')
    return new TorusError('TORUS_RING_TIMEOUT', `${who} went silent (reported by ${by})`, {
      peer: frame.culprit,
      reportedBy: frame.reporter,
    });
  if (frame.reason === 'protocol')
    return new TorusError('TORUS_PROTOCOL_INVALID', `${who} broke the ring protocol (reported by ${by})`, {
      peer: frame.culprit,
      reportedBy: frame.reporter,
    });
  return new TorusError('TORUS_RING_PEER_LOST', `lost ${who} (reported by ${by})`, {
    peer: frame.culprit,
    reportedBy: frame.reporter,
  });
}
