/**
 * What a ring connection's socket can tell a communicator: it failed or closed (the peer is lost), or, on a
 * send-only connection, the one thing a peer may send back (an abort frame) or anything else (a protocol error).
 */
import { TorusError } from '../protocols/errors.js';
import type { AbortFrame } from '../protocols/ring-frames.js';
import { describePeer, onAbortFrame, type Conn, type RingHost } from './peer-links.js';

export interface ConnEvents {
  /** the connection ended (error or close), with the error naming its peer */
  readonly ended: (error: TorusError) => void;
  readonly abort: (frame: AbortFrame) => void;
  readonly fault: (error: TorusError) => void;
}

export function watchConn(conn: Conn, hosts: readonly RingHost[], on: ConnEvents): void {
  const { socket } = conn;
  socket.on('error', (error) =>
    on.ended(
      new TorusError(
        'TORUS_RING_PEER_LOST',
        `connection to ${describePeer(hosts, conn.peer)} failed: ${error.message}`,
        { peer: conn.peer },
        { cause: error },
      ),
    ),
  );
  const closed = () =>
    on.ended(
      new TorusError('TORUS_RING_PEER_LOST', `lost ${describePeer(hosts, conn.peer)}: connection closed`, {
        peer: conn.peer,
      }),
    );
  socket.on('end', closed);
  socket.on('close', closed);
  // Accepted connections carry our data out; the only thing that may come back is an abort frame.
  if (!conn.reader)
    onAbortFrame(socket, on.abort, (why) => {
      on.fault(
        new TorusError(
          'TORUS_PROTOCOL_INVALID',
          `unexpected data from ${describePeer(hosts, conn.peer)} on a send-only connection: ${why}`,
          { peer: conn.peer },
        ),
      );
    });
}
