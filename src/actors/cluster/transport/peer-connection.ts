/**
 * One TCP connection to a peer: hello exchange (plaintext, nothing secret), a proof of the cluster key bound to
 * both hellos (auth.ts), then encrypted frames (frame-codec.ts). Nothing about the peer counts (it is not `ready`)
 * before its proof checked; in open mode the proof only shows it read our hello.
 * Every way it can end (socket error, bad frame, refused, handshake timeout, local close) arrives once as
 * `onClose(reason)`; a hostile peer can make it close, never throw.
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Logger } from '../../../runtime/log.js';
import { PROTOCOL_VERSION, type Hello, type PeerFrame, type RefuseReason } from '../../../protocols/peer-frames.js';
import { authProof, frameKey, proofMatches, transcript } from './auth.js';
import { cipherState, encodeFrame, FrameDecoder, type CipherState } from './frame-codec.js';

export interface LocalHello {
  readonly nodeId: string;
  readonly cluster: string;
  readonly incarnation: number;
  readonly startedAt: number;
  readonly port: number;
  readonly apiPort: number;
  readonly name: string;
  readonly version: string;
  readonly addresses: readonly string[];
}

export interface CloseInfo {
  readonly reason: string;
  /** Why the peer could not join, when it is one of the listed reasons. */
  readonly refused?: RefuseReason | 'incompatible-version';
  /** Whatever we learnt of the peer before the end. */
  readonly remote?: { nodeId?: string; cluster?: string; v?: number; incarnation?: number };
}

export interface PeerConnectionOptions {
  readonly socket: Socket;
  readonly local: LocalHello;
  readonly secret: string | null;
  readonly outbound: boolean;
  readonly log: Logger;
  readonly handshakeTimeoutMs?: number;
  readonly maxFrameBytes?: number;
  readonly onReady: (conn: PeerConnection) => void;
  readonly onFrame: (conn: PeerConnection, frame: PeerFrame) => void;
  readonly onClose: (conn: PeerConnection, info: CloseInfo) => void;
}

/** Bytes queued on a socket beyond which the peer is considered stuck (its frames would only pile up). */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;

export class PeerConnection {
  readonly outbound: boolean;
  readonly remoteAddress: string;
  remote: Hello | null = null;
  ready = false;
  closed = false;
  readonly #o: PeerConnectionOptions;
  readonly #decoder: FrameDecoder;
  readonly #nonce = randomBytes(16).toString('hex');
  readonly #hello: Hello;
  #cipherOut: CipherState | null = null;
  #transcript: Buffer | null = null;
  #timer: NodeJS.Timeout;

  constructor(options: PeerConnectionOptions) {
    this.#o = options;
    this.outbound = options.outbound;
    this.remoteAddress = (options.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    this.#decoder = new FrameDecoder(
      options.maxFrameBytes === undefined ? {} : { maxFrameBytes: options.maxFrameBytes },
    );
    const { socket } = options;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 2000);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err) => this.#end({ reason: `socket error: ${err.message}` }));
    socket.on('close', () => this.#end({ reason: 'socket closed by peer' }));
    this.#timer = setTimeout(() => this.close('handshake timed out'), options.handshakeTimeoutMs ?? 5000);
    const l = options.local;
    this.#hello = {
      type: 'hello',
      v: PROTOCOL_VERSION,
      nodeId: l.nodeId,
      cluster: l.cluster,
      incarnation: l.incarnation,
      startedAt: l.startedAt,
      port: l.port,
      apiPort: l.apiPort,
      nonce: this.#nonce,
      auth: options.secret !== null,
      name: l.name,
      version: l.version,
      addresses: [...l.addresses],
    };
    this.#write(this.#hello);
  }

  get nodeId(): string | undefined {
    return this.remote?.nodeId;
  }

  /** Sends a frame; false when the connection is closed or stuck (it is then closed). */
  send(frame: PeerFrame): boolean {
    if (this.closed || !this.ready) return false;
    return this.#write(frame);
  }

  /** Closes, telling the peer why when the reason is one it should list. */
  close(reason: string, refuse?: RefuseReason): void {
    if (this.closed) return;
    if (refuse) this.#write({ type: 'refuse', reason: refuse, detail: reason.slice(0, 200) });
    this.#end(refuse ? { reason, refused: refuse, ...this.#remoteSummary() } : { reason, ...this.#remoteSummary() });
  }

  #remoteSummary(): Pick<CloseInfo, 'remote'> {
    return this.remote
      ? {
          remote: {
            nodeId: this.remote.nodeId,
            cluster: this.remote.cluster,
            v: this.remote.v,
            incarnation: this.remote.incarnation,
          },
        }
      : {};
  }

  #write(frame: PeerFrame): boolean {
    const socket = this.#o.socket;
    if (socket.destroyed) return false;
    if (socket.writableLength > MAX_QUEUED_BYTES) {
      this.#end({ reason: 'peer is not reading (send queue full)' });
      return false;
    }
    try {
      socket.write(encodeFrame(frame, this.#cipherOut));
      return true;
    } catch (err) {
      this.#end({ reason: `send failed: ${(err as Error).message}` });
      return false;
    }
  }

  #end(info: CloseInfo): void {
    if (this.closed) return;
    this.closed = true;
    this.ready = false;
    clearTimeout(this.#timer);
    const socket = this.#o.socket;
    socket.end();
    // end() flushes a final refuse frame; destroy soon after even if the peer never reads.
    setTimeout(() => socket.destroy(), 200).unref();
    this.#o.onClose(this, info.remote || !this.remote ? info : { ...info, ...this.#remoteSummary() });
  }

  #onData(chunk: Buffer): void {
    if (this.closed) return;
    let r = this.#decoder.push(chunk);
    for (;;) {
      for (const frame of r.frames) {
        if (this.closed) return;
        if (this.ready) {
          if (frame.type === 'refuse')
            return this.#end({
              reason: `refused by peer: ${frame.reason}${frame.detail ? ` (${frame.detail})` : ''}`,
              refused: frame.reason,
              ...this.#remoteSummary(),
            });
          if (frame.type === 'hello' || frame.type === 'auth')
            return this.close('handshake frame after the handshake', 'protocol-error');
          this.#o.onFrame(this, frame);
        } else {
          this.#handshake(frame);
        }
      }
      if (r.error) {
        if (r.incompatible) {
          const remote = {
            v: r.incompatible.v,
            ...(r.incompatible.nodeId ? { nodeId: r.incompatible.nodeId } : {}),
            ...(r.incompatible.cluster ? { cluster: r.incompatible.cluster } : {}),
          };
          return this.#end({ reason: r.error, refused: 'incompatible-version', remote });
        }
        this.#o.log.warn('closing peer connection: bad frame', {
          peer: this.remote?.nodeId ?? this.remoteAddress,
          reason: r.error,
        });
        return this.close(`bad frame: ${r.error}`);
      }
      if (this.closed || (this.ready === false && r.frames.length === 0)) return;
      // During the handshake the decoder stops after each frame so the phase can change before reading on.
      const more = this.#decoder.drain();
      if (more.frames.length === 0 && !more.error) return;
      r = more;
    }
  }

  #handshake(frame: PeerFrame): void {
    const o = this.#o;
    switch (frame.type) {
      case 'refuse':
        return this.#end({
          reason: `refused by peer: ${frame.reason}${frame.detail ? ` (${frame.detail})` : ''}`,
          refused: frame.reason,
          ...this.#remoteSummary(),
        });
      case 'hello': {
        if (this.remote) return this.close('second hello', 'protocol-error');
        this.remote = frame;
        if (frame.nodeId === o.local.nodeId) return this.close('connected to myself', 'self');
        if (frame.cluster !== o.local.cluster) return this.close(`other cluster (${frame.cluster})`, 'other-cluster');
        if (o.secret === null && frame.auth)
          return this.close('peer requires the cluster key and this node has none (--insecure-open)', 'auth-required');
        if (o.secret !== null && !frame.auth)
          return this.close('peer has no cluster key (started with --insecure-open)', 'auth-required');
        const th = this.outbound ? transcript(this.#hello, frame) : transcript(frame, this.#hello);
        this.#transcript = th;
        this.#write({ type: 'auth', proof: authProof(o.secret, th, o.local.nodeId) });
        // Everything this side sends after its proof is sealed with its direction's key.
        if (o.secret !== null)
          this.#cipherOut = cipherState(
            frameKey(o.secret, th, this.outbound ? 'dialer-to-listener' : 'listener-to-dialer'),
          );
        return;
      }
      case 'auth': {
        const remote = this.remote;
        const th = this.#transcript;
        if (!remote || !th) return this.close('auth before hello', 'protocol-error');
        if (!proofMatches(authProof(o.secret, th, remote.nodeId), frame.proof)) {
          return o.secret === null
            ? this.close('bad open-mode proof', 'protocol-error')
            : this.close('wrong cluster key', 'auth-failure');
        }
        return this.#established(
          o.secret === null
            ? null
            : cipherState(frameKey(o.secret, th, this.outbound ? 'listener-to-dialer' : 'dialer-to-listener')),
        );
      }
      default:
        return this.close(`${frame.type} before the handshake`, 'protocol-error');
    }
  }

  #established(cipherIn: CipherState | null): void {
    clearTimeout(this.#timer);
    this.#decoder.established(cipherIn);
    this.ready = true;
    this.#o.onReady(this);
  }
}
