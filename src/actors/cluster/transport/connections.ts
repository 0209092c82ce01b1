/**
 * Peer connections of one node: the listening socket, dialing (static peers, mDNS finds, gossiped addresses)
 * with backoff, collapsing duplicate connections to one per node, and the "heard but not joined" list.
 *
 * Collapse rule (both ends compute it alike): of two live connections between A and B of the same incarnation,
 * keep the one dialed by the lower node id; a newer incarnation replaces the old connection.
 *
 * A target that refused us (secret, cluster, version) is re-dialled with an exponential backoff (redial.ts), reset
 * when the peer shows a new incarnation (advert or its own dial to us) or joins.
 *
 * Bounds (a stranger on the LAN can open sockets, not members): inbound connections still in their handshake have
 * a budget of their own (`maxPendingHandshakes`, at most `maxPendingPerAddress` from one address) and a short
 * deadline, apart from the established connections, so idle sockets cannot keep a member out. mDNS targets are
 * capped (MAX_MDNS_TARGETS), the stalest unreachable one giving way to a new one.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../../../runtime/log.js';
import type { PeerAddress, PeerFrame, RefuseReason } from '../../../protocols/peer-frames.js';
import { PeerConnection, type CloseInfo, type LocalHello } from './peer-connection.js';
import { DEFAULT_REDIAL, NO_REFUSALS, refused, shouldReset, type RedialPolicy, type Refusals } from './redial.js';
import { listedReason, type HeardPeer, type TargetSource } from './heard.js';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS, HandshakeBudget } from './handshake-budget.js';

export type { HeardPeer, HeardReason, TargetSource } from './heard.js';

interface Target {
  readonly host: string;
  readonly port: number;
  source: TargetSource;
  nodeId?: string;
  failures: number;
  nextAt: number;
  refusals: Refusals;
  /** Last incarnation its mDNS advert showed. */
  incarnation?: number;
  conn?: PeerConnection;
  everJoined: boolean;
  self: boolean;
}

export interface ConnectionManagerOptions {
  readonly local: Omit<LocalHello, 'port'>;
  readonly secret: string | null;
  readonly host: string;
  readonly port: number;
  readonly log: Logger;
  readonly now: () => number;
  readonly maxFrameBytes?: number;
  /** Backoff for peers that refused us (default 10 s doubling to 5 min). */
  readonly redial?: RedialPolicy;
  /** Inbound connections in their handshake at once (default DEFAULT_MAX_PENDING_HANDSHAKES). */
  readonly maxPendingHandshakes?: number;
  /** Time a connection has to complete its handshake (default DEFAULT_HANDSHAKE_TIMEOUT_MS). */
  readonly handshakeTimeoutMs?: number;
  /** Called with the number of dials made (for tests and metrics). */
  readonly onDial?: (host: string, port: number) => void;
  readonly onJoined: (conn: PeerConnection) => void;
  readonly onLeft: (conn: PeerConnection, reason: string) => void;
  readonly onFrame: (conn: PeerConnection, frame: PeerFrame) => void;
}

const UNREACHABLE_AFTER = 3;
/** Established (authenticated) connections: far above any desk cluster. */
const MAX_CONNECTIONS = 256;
const MAX_HEARD = 256;
/** Dial targets learnt from mDNS adverts (static and gossiped ones come from configuration or members). */
export const MAX_MDNS_TARGETS = 32;

export class ConnectionManager {
  readonly #o: ConnectionManagerOptions;
  readonly #joined = new Map<string, PeerConnection>();
  readonly #all = new Set<PeerConnection>();
  readonly #targets = new Map<string, Target>();
  readonly #heard = new Map<string, HeardPeer>();
  /** Connections closed as duplicates or replaced: their close is not a departure. */
  readonly #superseded = new WeakSet<PeerConnection>();
  readonly #targetOf = new WeakMap<PeerConnection, Target>();
  readonly #pending: HandshakeBudget<PeerConnection>;
  #server: Server | null = null;
  #local: LocalHello | null = null;
  #stopped = false;
  #atLimitLoggedAt = -Infinity;

  constructor(options: ConnectionManagerOptions) {
    this.#o = options;
    this.#pending = new HandshakeBudget(options.maxPendingHandshakes);
  }

  async listen(): Promise<number> {
    const server = createServer((socket) => {
      if (this.#stopped || !this.#local) return void socket.destroy();
      const from = (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
      const why =
        this.#pending.refusal(from) ??
        (this.#all.size - this.#pending.pending >= MAX_CONNECTIONS
          ? `${MAX_CONNECTIONS} connections established`
          : null);
      if (why) {
        // Logged once a minute at most: a flood must not become a log flood.
        if (this.#o.now() - this.#atLimitLoggedAt > 60_000) {
          this.#atLimitLoggedAt = this.#o.now();
          this.#o.log.warn('cluster port at a limit: refusing connections', {
            why,
            from,
            refused: this.#pending.refused,
          });
        }
        return void socket.destroy();
      }
      this.#pending.add(from, this.#adopt(socket, false));
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#o.port, this.#o.host, () => resolve());
    });
    server.on('error', (err) => this.#o.log.error('cluster listener error', { err }));
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : this.#o.port;
    this.#local = { ...this.#o.local, port };
    return port;
  }

  /** Inbound handshakes in progress, and connections refused at a limit since start. */
  get handshakes(): { pending: number; refused: number } {
    return { pending: this.#pending.pending, refused: this.#pending.refused };
  }

  get joined(): ReadonlyMap<string, PeerConnection> {
    return this.#joined;
  }

  heard(): HeardPeer[] {
    return [...this.#heard.values()].sort((a, b) => a.address.localeCompare(b.address));
  }

  /** Where other nodes can dial each joined peer (for gossip). */
  addresses(): PeerAddress[] {
    return [...this.#joined.values()].flatMap((c) => {
      const t = this.#targetOf.get(c);
      const host = t?.host ?? c.remoteAddress;
      return c.remote && host ? [{ nodeId: c.remote.nodeId, host, port: c.remote.port }] : [];
    });
  }

  /** `incarnation`: from an mDNS advert; a new one resets the backoff of a peer that refused us. */
  addTarget(host: string, port: number, source: TargetSource, nodeId?: string, incarnation?: number): void {
    if (this.#stopped) return;
    if (nodeId !== undefined && (nodeId === this.#o.local.nodeId || this.#joined.has(nodeId))) return;
    const key = `${host}:${port}`;
    const known = this.#targets.get(key);
    if (known) {
      if (nodeId !== undefined) known.nodeId = nodeId;
      if (incarnation !== undefined) {
        known.incarnation = incarnation;
        this.#maybeReset(known, incarnation, 'advertised');
      }
      return;
    }
    if (source === 'mdns' && !this.#roomForMdnsTarget()) return;
    this.#targets.set(key, {
      host,
      port,
      source,
      failures: 0,
      nextAt: 0,
      refusals: NO_REFUSALS,
      everJoined: false,
      self: false,
      ...(nodeId !== undefined ? { nodeId } : {}),
      ...(incarnation !== undefined ? { incarnation } : {}),
    });
  }

  /** At the mDNS cap, the stalest mDNS target that never joined and is not connected gives way (or none can). */
  #roomForMdnsTarget(): boolean {
    const mdns = [...this.#targets.entries()].filter(([, t]) => t.source === 'mdns');
    if (mdns.length < MAX_MDNS_TARGETS) return true;
    const idle = mdns.filter(([, t]) => !t.everJoined && !t.conn && (t.failures > 0 || t.refusals.count > 0));
    if (idle.length === 0) return false;
    const [key] = idle.reduce((a, b) =>
      b[1].failures + b[1].refusals.count > a[1].failures + a[1].refusals.count ? b : a,
    );
    this.#targets.delete(key);
    return true;
  }

  /** A peer that refused us shows a new incarnation (restarted, perhaps reconfigured): dial it again now. */
  #maybeReset(t: Target, incarnation: number, how: string): void {
    if (!shouldReset(t.refusals, incarnation)) return;
    this.#o.log.info('peer that refused us restarted: dialing again', {
      address: `${t.host}:${t.port}`,
      nodeId: t.nodeId,
      how,
      incarnation,
    });
    t.refusals = NO_REFUSALS;
    t.nextAt = 0;
    const key = `${t.host}:${t.port}`;
    const h = this.#heard.get(key);
    if (h) this.#heard.set(key, { ...h, attempts: 0, nextRetryAt: this.#o.now() });
  }

  /** Records a peer we heard of (e.g. by mDNS) but will not dial, with the reason. */
  noteHeard(entry: Omit<HeardPeer, 'at'>): void {
    this.#heard.delete(entry.address);
    this.#heard.set(entry.address, { ...entry, at: this.#o.now() });
    // Bounded: a busy LAN full of other clusters must not grow it forever (oldest report goes first).
    if (this.#heard.size > MAX_HEARD) this.#heard.delete(this.#heard.keys().next().value!);
  }

  /** Dials every target that is due. */
  tick(): void {
    if (this.#stopped || !this.#local) return;
    const now = this.#o.now();
    for (const t of this.#targets.values()) {
      if (t.self || t.conn || now < t.nextAt) continue;
      if (t.nodeId !== undefined && this.#joined.has(t.nodeId)) continue;
      this.#dial(t);
    }
  }

  send(nodeId: string, frame: PeerFrame): boolean {
    return this.#joined.get(nodeId)?.send(frame) ?? false;
  }

  close(nodeId: string, reason: string): void {
    this.#joined.get(nodeId)?.close(reason);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const c of this.#all) c.close('node stopping');
    const server = this.#server;
    this.#server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #dial(t: Target): void {
    this.#o.onDial?.(t.host, t.port);
    const socket = connect({ host: t.host, port: t.port });
    const conn = this.#adopt(socket, true);
    t.conn = conn;
    this.#targetOf.set(conn, t);
  }

  #adopt(socket: Socket, outbound: boolean): PeerConnection {
    const conn = new PeerConnection({
      socket,
      outbound,
      local: this.#local!,
      secret: this.#o.secret,
      log: this.#o.log,
      handshakeTimeoutMs: this.#o.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
      ...(this.#o.maxFrameBytes !== undefined ? { maxFrameBytes: this.#o.maxFrameBytes } : {}),
      onReady: (c) => this.#onReady(c),
      onFrame: (c, f) => this.#onFrame(c, f),
      onClose: (c, info) => this.#onClose(c, info),
    });
    this.#all.add(conn);
    return conn;
  }

  #onReady(conn: PeerConnection): void {
    this.#pending.settle(conn.remoteAddress, conn);
    const remote = conn.remote!;
    const id = remote.nodeId;
    const t = this.#targetOf.get(conn);
    if (t) {
      t.nodeId = id;
      t.failures = 0;
      t.everJoined = true;
    }
    for (const other of this.#targets.values()) if (other.nodeId === id) other.refusals = NO_REFUSALS;
    for (const [key, h] of this.#heard)
      if (h.nodeId === id || key === (t ? `${t.host}:${t.port}` : '')) this.#heard.delete(key);
    const existing = this.#joined.get(id);
    if (existing?.remote) {
      if (remote.incarnation < existing.remote.incarnation)
        return this.#drop(conn, 'an older incarnation of a joined node');
      if (remote.incarnation === existing.remote.incarnation) {
        const dialer = (c: PeerConnection) => (c.outbound ? this.#o.local.nodeId : id);
        const keeper = this.#o.local.nodeId < id ? this.#o.local.nodeId : id;
        if (dialer(existing) === keeper || dialer(conn) !== keeper) return this.#drop(conn, 'duplicate connection');
        // Swap quietly: same peer, same process, the agreement core need not know.
        this.#joined.set(id, conn);
        this.#drop(existing, 'duplicate connection');
        return;
      }
      // A restarted process: the old connection is stale.
      this.#superseded.add(existing);
      this.#joined.delete(id);
      existing.close('replaced by a newer incarnation');
      this.#o.onLeft(existing, 'replaced by a newer incarnation');
    }
    this.#joined.set(id, conn);
    this.#o.onJoined(conn);
    conn.send({ type: 'peers', peers: this.addresses().filter((p) => p.nodeId !== id) });
  }

  #drop(conn: PeerConnection, why: string): void {
    this.#superseded.add(conn);
    conn.close(why, 'duplicate');
  }

  #onFrame(conn: PeerConnection, frame: PeerFrame): void {
    if (this.#joined.get(conn.nodeId ?? '') !== conn) return; // frames on a superseded connection
    if (frame.type === 'peers') {
      for (const p of frame.peers) this.addTarget(p.host, p.port, 'gossip', p.nodeId);
      return;
    }
    this.#o.onFrame(conn, frame);
  }

  /** Tells every joined peer about the others (a node reachable by one peer becomes reachable by all). */
  gossip(): void {
    const all = this.addresses();
    for (const [id, conn] of this.#joined) conn.send({ type: 'peers', peers: all.filter((p) => p.nodeId !== id) });
  }

  #onClose(conn: PeerConnection, info: CloseInfo): void {
    this.#all.delete(conn);
    this.#pending.settle(conn.remoteAddress, conn);
    const t = this.#targetOf.get(conn);
    const now = this.#o.now();
    if (t && t.conn === conn) {
      t.conn = undefined;
      if (info.refused === 'self') t.self = true;
      else if (this.#superseded.has(conn) || info.refused === 'duplicate') t.nextAt = now + 1000;
      else if (info.refused) {
        if (t.nodeId === undefined && info.remote?.nodeId !== undefined) t.nodeId = info.remote.nodeId;
        const r = refused(t.refusals, now, info.remote?.incarnation ?? t.incarnation, this.#o.redial ?? DEFAULT_REDIAL);
        t.refusals = r.refusals;
        t.nextAt = r.nextAt;
      } else {
        t.failures += 1;
        t.nextAt = now + Math.min(5000, 250 * 2 ** Math.min(t.failures, 5));
      }
      if (!info.refused && !t.everJoined && t.failures >= UNREACHABLE_AFTER) {
        this.noteHeard({
          address: `${t.host}:${t.port}`,
          ...(t.nodeId ? { nodeId: t.nodeId } : {}),
          reason: 'unreachable',
          detail: info.reason,
          via: t.source,
        });
      }
    }
    const listed = listedReason(info.refused);
    if (listed) {
      const address = t ? `${t.host}:${t.port}` : `${conn.remoteAddress}${conn.remote ? `:${conn.remote.port}` : ''}`;
      const nodeId = info.remote?.nodeId ?? t?.nodeId;
      // (An inbound refusal from a peer we also dial keeps showing our dial's backoff: same address, same entry.)
      const dialed = t ?? this.#targets.get(address);
      const retry =
        dialed && dialed.refusals.count > 0 ? { attempts: dialed.refusals.count, nextRetryAt: dialed.nextAt } : {};
      this.noteHeard({
        address,
        ...(nodeId ? { nodeId } : {}),
        reason: listed,
        detail: info.reason,
        via: t?.source ?? 'inbound',
        ...retry,
      });
      this.#o.log.warn('peer not joined', { address, nodeId, reason: listed, detail: info.reason, ...retry });
      // It dialed us: if it is a newer process than the one that refused our dials, try it again now.
      if (!t && nodeId !== undefined && info.remote?.incarnation !== undefined) {
        for (const other of this.#targets.values())
          if (other.nodeId === nodeId) this.#maybeReset(other, info.remote.incarnation, 'dialed us');
      }
    }
    const id = conn.nodeId;
    if (id !== undefined && this.#joined.get(id) === conn) {
      this.#joined.delete(id);
      if (!this.#superseded.has(conn)) this.#o.onLeft(conn, info.reason);
    }
  }
}

export type { RefuseReason };
