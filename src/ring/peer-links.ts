/**
 * Connection set-up between a rank and its two ring neighbours (MLX hostfile semantics, exo's
 * hosts-by-node: `hosts[rank]` is where this rank listens — usually 0.0.0.0:port — and
 * `hosts[rank ± 1]` are the neighbours as reachable from here).
 *
 * Every rank listens first, then dials both neighbours `connections` times each and accepts as many
 * from them; a connection carries data only from the acceptor to the dialer (see ring-frames.ts).
 * Because listening starts before any dial and dials retry until the deadline, no connect order can
 * deadlock (MLX needs its accept-then-connect order only because its accept blocks).
 */
import net from 'node:net';
import { TorusError } from '../protocols/errors.js';
import {
  decodeRingFrame,
  encodeRingFrame,
  FRAME_BYTES,
  type AbortFrame,
  type HelloFrame,
} from '../protocols/ring-frames.js';
import { StreamReader } from './stream-reader.js';
import { challenge, CHALLENGE_BYTES, LINK_MAC_BYTES, linkMac, linkMacMatches } from './link-proof.js';

export interface RingHost {
  readonly ip: string;
  readonly port: number;
}

export interface Conn {
  readonly socket: net.Socket;
  /** Present on dialed connections (the ones this rank reads). */
  readonly reader: StreamReader | null;
  readonly peer: number;
  readonly side: 'left' | 'right';
  readonly index: number;
}

export interface PeerLinks {
  readonly readLeft: Conn[];
  readonly readRight: Conn[];
  readonly writeLeft: Conn[];
  readonly writeRight: Conn[];
  readonly all: Conn[];
}

export interface LinkOptions {
  readonly rank: number;
  readonly hosts: readonly RingHost[];
  readonly connections: number;
  readonly ringId: number;
  readonly connectTimeoutMs: number;
  readonly retryDelayMs: number;
  /** Data-plane key: every connection proves it when it opens (link-proof.ts); null = open mode, no proof. */
  readonly key: string | null;
  /** Faults on a dialed connection's reader (e.g. a throwing completion handler) after set-up. */
  readonly onReaderFault: (conn: () => Conn | undefined, error: unknown) => void;
}

const mod = (x: number, n: number) => ((x % n) + n) % n;
/** Time an accepted connection has to send its hello (and proof). */
const HELLO_DEADLINE_MS = 2000;

/** Watches a send-only (accepted) connection for the one frame that may come back: an abort. */
export function onAbortFrame(
  socket: net.Socket,
  onAbort: (frame: AbortFrame) => void,
  onBad: (why: string) => void,
): void {
  let inbox = Buffer.alloc(0);
  socket.on('data', (data: Buffer) => {
    inbox = Buffer.concat([inbox, data]);
    if (inbox.length < FRAME_BYTES) return;
    let frame: ReturnType<typeof decodeRingFrame>;
    try {
      frame = decodeRingFrame(new Uint8Array(inbox.subarray(0, FRAME_BYTES)));
    } catch (error) {
      return onBad((error as Error).message);
    }
    if (frame.kind === 'abort') onAbort(frame);
    else onBad(`unexpected ${frame.kind} frame`);
  });
}

/** Bytes received on the dialed (reading) connections, and how many took a user-space copy. */
export function readStats(links: PeerLinks): { bytesRead: number; bytesCopied: number } {
  let bytesRead = 0;
  let bytesCopied = 0;
  for (const conn of links.all)
    if (conn.reader) {
      bytesRead += conn.reader.bytesRead;
      bytesCopied += conn.reader.bytesCopied;
    }
  return { bytesRead, bytesCopied };
}

export function describePeer(hosts: readonly RingHost[], rank: number): string {
  const host = hosts[rank];
  return host ? `rank ${rank} (${host.ip}:${host.port})` : `rank ${rank}`;
}

export async function establishLinks(options: LinkOptions): Promise<PeerLinks> {
  const { rank, hosts, connections: k } = options;
  const n = hosts.length;
  const left = mod(rank - 1, n);
  const right = mod(rank + 1, n);
  const links: PeerLinks = { readLeft: [], readRight: [], writeLeft: [], writeRight: [], all: [] };
  const sockets = new Set<net.Socket>();
  const self = hosts[rank] as RingHost;
  const server = net.createServer({ noDelay: true });
  const deadline = Date.now() + options.connectTimeoutMs;
  let failed: TorusError | null = null;

  let settle!: (error: TorusError | null) => void;
  const done = new Promise<TorusError | null>((resolve) => {
    settle = resolve;
  });
  const expected = 4 * k;
  const check = () => {
    if (links.all.length === expected) settle(null);
  };
  const fail = (error: TorusError) => {
    if (!failed) {
      failed = error;
      settle(error);
    }
  };

  const key = options.key;
  // With a key the dialer's first bytes are its hello, its nonce and its MAC over our challenge.
  const helloBytes = FRAME_BYTES + (key === null ? 0 : CHALLENGE_BYTES + LINK_MAC_BYTES);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const ours = key === null ? null : challenge();
    if (ours) socket.write(ours);
    // A connection that does not present its (proven) hello soon is a stranger holding a socket: drop it.
    const stall = setTimeout(() => {
      sockets.delete(socket);
      socket.destroy();
    }, HELLO_DEADLINE_MS);
    let hello = Buffer.alloc(0);
    const onData = (data: Buffer) => {
      hello = Buffer.concat([hello, data]);
      if (hello.length < helloBytes) return;
      socket.off('data', onData);
      clearTimeout(stall);
      try {
        if (hello.length > helloBytes) throw new Error('expected one hello frame');
        const helloFrame = hello.subarray(0, FRAME_BYTES);
        const theirs = hello.subarray(FRAME_BYTES, FRAME_BYTES + CHALLENGE_BYTES);
        if (
          key !== null &&
          !linkMacMatches(
            linkMac(key, 'hello', helloFrame, ours!, theirs),
            hello.subarray(FRAME_BYTES + CHALLENGE_BYTES),
          )
        ) {
          throw new Error('no proof of the cluster key');
        }
        const frame = decodeRingFrame(new Uint8Array(helloFrame));
        if (frame.kind !== 'hello') throw new Error('expected one hello frame');
        if (frame.ringId !== options.ringId || frame.worldSize !== n)
          throw new Error(`ring ${frame.ringId}/${frame.worldSize} is not ours`);
        // The dialer says which neighbour we are to it: its right → it is our left, and the reverse.
        const side = frame.role === 'right' ? 'left' : 'right';
        if (frame.rank !== (side === 'left' ? left : right))
          throw new Error(`rank ${frame.rank} is not our ${side} neighbour`);
        const list = side === 'left' ? links.writeLeft : links.writeRight;
        if (frame.connection >= k || list.some((c) => c.index === frame.connection))
          throw new Error(`unexpected connection ${frame.connection}`);
        const conn: Conn = { socket, reader: null, peer: frame.rank, side, index: frame.connection };
        list.push(conn);
        links.all.push(conn);
        const ack = encodeRingFrame({
          kind: 'ack',
          role: frame.role,
          ringId: options.ringId,
          rank,
          worldSize: n,
          connection: frame.connection,
        });
        socket.write(key === null ? ack : Buffer.concat([ack, linkMac(key, 'ack', ack, ours!, theirs)]));
        check();
      } catch {
        // A stray or foreign connection: refuse it and keep waiting for the real neighbour.
        sockets.delete(socket);
        socket.destroy();
      }
    };
    socket.on('data', onData);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(stall);
      if (links.all.some((c) => c.socket === socket))
        fail(
          new TorusError(
            'TORUS_RING_PEER_LOST',
            `connection from ${describePeer(hosts, left)} closed during ring set-up`,
            { rank },
          ),
        );
    });
  });

  const listening = new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: self.ip, port: self.port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  try {
    await listening;
  } catch (error) {
    throw new TorusError(
      'TORUS_CONFIG_INVALID',
      `ring rank ${rank} cannot listen on ${self.ip}:${self.port}: ${(error as Error).message}`,
      { rank },
      { cause: error },
    );
  }

  const dial = async (side: 'left' | 'right', index: number) => {
    const peer = side === 'right' ? right : left;
    const host = hosts[peer] as RingHost;
    let attempt = 0;
    for (;;) {
      if (failed) return;
      const conn = await dialOnce(side, index, peer, host).catch((error: unknown) => error as Error);
      if (!(conn instanceof Error)) {
        (side === 'right' ? links.readRight : links.readLeft).push(conn);
        links.all.push(conn);
        check();
        return;
      }
      if (conn instanceof TorusError) return fail(conn);
      attempt++;
      const wait = Math.min(options.retryDelayMs * 2 ** Math.min(attempt, 10), 1000);
      if (Date.now() + wait > deadline) {
        return fail(
          new TorusError(
            'TORUS_RING_TIMEOUT',
            `rank ${rank} could not connect to its ${side} neighbour ${describePeer(hosts, peer)} within ${options.connectTimeoutMs} ms: ${conn.message}`,
            { rank, peer, attempts: attempt },
          ),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };

  const dialOnce = (side: 'left' | 'right', index: number, peer: number, host: RingHost) =>
    new Promise<Conn>((resolve, reject) => {
      let conn: Conn | undefined;
      const reader = new StreamReader((error) => options.onReaderFault(() => conn, error));
      // `onread` is documented for net.Socket (Node >= 12.1) but missing from @types/node 20.
      const socket = new net.Socket({ onread: reader.onread() } as net.SocketConstructorOpts);
      reader.attach(socket);
      sockets.add(socket);
      let acked = false;
      const onEarlyClose = () => {
        if (!acked) {
          sockets.delete(socket);
          reject(new Error('closed before ack'));
        }
      };
      socket.once('error', (error) => {
        if (!acked) {
          sockets.delete(socket);
          socket.destroy();
          reject(error);
        }
      });
      socket.once('close', onEarlyClose);
      const refuse = (why: string) => {
        socket.destroy();
        reject(new TorusError('TORUS_PROTOCOL_INVALID', `${describePeer(hosts, peer)} ${why}`, { rank, peer }));
      };
      const onAck = (ack: Uint8Array, proof: () => boolean) => {
        let frame: HelloFrame;
        try {
          const decoded = decodeRingFrame(ack);
          if (decoded.kind !== 'ack') throw new Error('expected an ack');
          frame = decoded;
        } catch (error) {
          return refuse(`answered with an invalid ring ack: ${(error as Error).message}`);
        }
        if (!proof()) return refuse('did not prove the cluster key (a stranger on the ring port?)');
        if (
          frame.rank !== peer ||
          frame.worldSize !== n ||
          frame.ringId !== options.ringId ||
          frame.connection !== index
        ) {
          socket.destroy();
          return reject(
            new TorusError(
              'TORUS_PROTOCOL_INVALID',
              `${host.ip}:${host.port} is rank ${frame.rank} of ring ${frame.ringId}/${frame.worldSize}, expected ${describePeer(hosts, peer)}`,
              { rank, peer },
            ),
          );
        }
        acked = true;
        socket.off('close', onEarlyClose);
        conn = { socket, reader, peer, side, index };
        resolve(conn);
      };
      socket.connect({ host: host.ip, port: host.port, noDelay: true }, () => {
        const hello = encodeRingFrame({
          kind: 'hello',
          role: side,
          ringId: options.ringId,
          rank,
          worldSize: n,
          connection: index,
        });
        const key = options.key;
        if (key === null) {
          socket.write(hello);
          const ack = new Uint8Array(FRAME_BYTES);
          return reader.expect(ack, () => onAck(ack, () => true));
        }
        const theirs = new Uint8Array(CHALLENGE_BYTES);
        reader.expect(theirs, () => {
          const ours = challenge();
          socket.write(Buffer.concat([hello, ours, linkMac(key, 'hello', hello, theirs, ours)]));
          const answer = new Uint8Array(FRAME_BYTES + LINK_MAC_BYTES);
          reader.expect(answer, () => {
            const ack = answer.subarray(0, FRAME_BYTES);
            onAck(ack, () => linkMacMatches(linkMac(key, 'ack', ack, theirs, ours), answer.subarray(FRAME_BYTES)));
          });
        });
      });
    });

  const timer = setTimeout(() => {
    const missing: string[] = [];
    for (const side of ['left', 'right'] as const) {
      const peer = side === 'left' ? left : right;
      const reads = side === 'left' ? links.readLeft : links.readRight;
      const writes = side === 'left' ? links.writeLeft : links.writeRight;
      if (reads.length < k || writes.length < k) missing.push(describePeer(hosts, peer));
    }
    fail(
      new TorusError(
        'TORUS_RING_TIMEOUT',
        `ring set-up of rank ${rank} timed out after ${options.connectTimeoutMs} ms waiting for ${[...new Set(missing)].join(', ')}`,
        { rank },
      ),
    );
  }, options.connectTimeoutMs);

  for (let index = 0; index < k; index++) {
    void dial('right', index);
    void dial('left', index);
  }
  const error = await done;
  clearTimeout(timer);
  server.close();
  if (error) {
    for (const socket of sockets) socket.destroy();
    throw error;
  }
  for (const socket of sockets) if (!links.all.some((c) => c.socket === socket)) socket.destroy();
  return links;
}
