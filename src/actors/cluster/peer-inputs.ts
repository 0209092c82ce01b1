/**
 * What a peer connection's events become for the agreement core: a joined peer's hello as a `joined` input, and
 * each frame dispatched (forwarded writes to the forwarder, agreement frames to the core, a snapshot only once it
 * decodes and matches its digest, anything else closes the connection).
 */
import type { AgreementFrame, AgreementInput } from './agreement/types.js';
import type { StateMachine } from './agreement/state-machine.js';
import type { Hello, PeerFrame } from '../../protocols/peer-frames.js';
import type { Logger } from '../../runtime/log.js';
import type { Forwarder } from './transport/forwarder.js';
import type { PeerConnection } from './transport/peer-connection.js';

/** The core's input for a peer that joined (its hello: who it is and where it listens). */
export function joinedInput(h: Hello, now: number): AgreementInput {
  return {
    kind: 'joined',
    now,
    nodeId: h.nodeId,
    incarnation: h.incarnation,
    startedAt: h.startedAt,
    descriptor: {
      nodeId: h.nodeId,
      name: h.name,
      incarnation: h.incarnation,
      apiPort: h.apiPort,
      peerPort: h.port,
      version: h.version,
      addresses: h.addresses,
    },
  };
}

export interface FrameSink<S> {
  readonly forwarder: Forwarder<S>;
  readonly replica: StateMachine<S>;
  readonly log: Logger;
  /** hands an agreement frame to the core */
  readonly run: (from: string, frame: AgreementFrame) => void;
}

export function dispatchFrame<S>(sink: FrameSink<S>, c: PeerConnection, f: PeerFrame): void {
  const from = c.remote!.nodeId;
  switch (f.type) {
    case 'forward':
      void sink.forwarder.serve(from, f);
      return;
    case 'forward-reply':
      sink.forwarder.reply(from, f);
      return;
    case 'snapshot': {
      // Checked before the core sees it: the core takes a snapshot's index as committed the moment it installs
      // one, so a state that does not decode or match its digest must never reach it (a peer sending one is
      // broken or hostile: dropped, and it may reconnect).
      const refusal = snapshotRefusal(sink.replica, f);
      if (refusal) {
        sink.log.warn('snapshot refused', { from, index: f.index, reason: refusal });
        c.close(`snapshot refused: ${refusal}`, 'protocol-error');
        return;
      }
      sink.run(from, f);
      return;
    }
    case 'heartbeat':
    case 'vote-request':
    case 'vote':
    case 'append':
    case 'append-ack':
    case 'gap-request':
    case 'snapshot-request':
      sink.run(from, f);
      return;
    default:
      c.close(`unexpected ${f.type} frame`, 'protocol-error');
  }
}

function snapshotRefusal<S>(replica: StateMachine<S>, f: Extract<PeerFrame, { type: 'snapshot' }>): string | null {
  try {
    const state = replica.decode(f.state);
    return replica.digest(state) === f.digest ? null : 'digest mismatch';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
