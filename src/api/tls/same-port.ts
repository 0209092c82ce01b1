/**
 * TLS and plain HTTP on one port: the first byte a client sends decides (0x16 opens a TLS handshake; an HTTP
 * request starts with a letter). So the API port, `--peers host:port` and the mDNS adverts stay what they were,
 * browsers and the CLI from other machines speak HTTPS, and the probe and artifact streams between nodes keep
 * plain sockets at full speed (they carry no credential: their own proofs, see docs/security.md). What plain
 * HTTP may carry is decided per request (plain-http-policy.ts).
 */
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';

const TLS_HANDSHAKE = 0x16;
/** A client that connects and says nothing is cut after this long (the HTTP servers' own timeouts start later). */
const FIRST_BYTE_TIMEOUT_MS = 10_000;

export interface FrontServer {
  readonly server: NetServer;
  /** Cuts the connections that have not said their first byte yet (the HTTP servers close the others). */
  dropUndecided(): void;
  /** Stops the HTTP servers' connection checks (they never listened, so closing them only does that). */
  closeServers(): void;
}

/** `guard` sees every connection first (the connection limits) and may destroy it. */
export function frontServer(plain: HttpServer, secure: HttpsServer, guard: (front: NetServer) => void): FrontServer {
  const front = createNetServer();
  const undecided = new Set<Socket>();
  guard(front);
  // The two HTTP servers never listen themselves. Node starts an HTTP server's connection tracking on its
  // 'listening' event: without it neither the headers and request timeouts (slow-loris bounds) nor
  // closeIdleConnections / closeAllConnections would apply to a connection handed over below.
  front.once('listening', () => {
    plain.emit('listening');
    secure.emit('listening');
  });
  front.on('connection', (socket: Socket) => {
    if (socket.destroyed) return; // refused by a connection limit
    undecided.add(socket);
    const timer = setTimeout(() => socket.destroy(), FIRST_BYTE_TIMEOUT_MS);
    const onError = (): void => void socket.destroy();
    socket.once('error', onError);
    socket.once('close', () => {
      clearTimeout(timer);
      undecided.delete(socket);
    });
    socket.once('data', (first: Buffer) => {
      clearTimeout(timer);
      undecided.delete(socket);
      socket.off('error', onError);
      socket.pause();
      socket.unshift(first);
      (first[0] === TLS_HANDSHAKE ? secure : plain).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  return {
    server: front,
    dropUndecided: () => {
      for (const s of undecided) s.destroy();
    },
    closeServers: () => {
      plain.close(() => undefined);
      secure.close(() => undefined);
    },
  };
}
