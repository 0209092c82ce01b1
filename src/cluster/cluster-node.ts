/**
 * ClusterNode: the shell around the agreement core. It owns the sockets (ConnectionManager), mDNS, the timer
 * and the replicated state; it feeds inputs to `step` and performs the effects in order. The cluster actor's
 * worker is a thin wrapper around it; tests and the lab fixture use it directly.
 */
import { EventEmitter } from 'node:events';
import { asTorusError, TorusError } from '../core/errors.js';
import { createLogger, type Logger } from '../runtime/log.js';
import { PROTOCOL_VERSION, type EventBody, type IndexedEnvelope, type PeerFrame } from '../protocols/peer-frames.js';
import { initialAgreement, step } from './agreement.js';
import { DEFAULT_TIMINGS, type AgreementConfig, type AgreementInput, type AgreementState } from './agreement-types.js';
import { clusterNameHash } from './auth.js';
import { ConnectionManager, type HeardPeer } from './connections.js';
import { MdnsDiscovery } from './discovery.js';
import { lastIndex } from './log.js';
import type { PeerConnection } from './peer-connection.js';
import type { NodeDescriptor } from './replicated-state.js';
import { Forwarder, type CommandResult } from './forwarder.js';
import { membershipChanges } from './membership.js';
import { StateStore } from './state-store.js';

import { localIPv4s, parsePeers, type ClusterNodeOptions, type RoleInfo } from './cluster-node-options.js';

export type { CommandResult };
export { localIPv4s, parsePeers, type ClusterNodeOptions, type RoleInfo };

export class ClusterNode<S> extends EventEmitter {
  readonly nodeId: string;
  readonly #o: ClusterNodeOptions<S>;
  readonly #cfg: AgreementConfig;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #conns: ConnectionManager;
  readonly #forwarder: Forwarder<S>;
  readonly #descriptors = new Map<string, NodeDescriptor>();
  #core: AgreementState;
  #state: S;
  #mdns: MdnsDiscovery | null = null;
  #timer: NodeJS.Timeout | null = null;
  #port = 0;
  #lastGossip = 0;
  #stopped = false;
  #self: NodeDescriptor | null = null;
  #held: string | null = null;
  #store: StateStore<S> | null = null;

  constructor(options: ClusterNodeOptions<S>) {
    super();
    this.#o = options;
    this.nodeId = options.nodeId;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? createLogger({ component: 'cluster', node: options.nodeId });
    this.#cfg = { ...DEFAULT_TIMINGS, ...options.timings, selfId: options.nodeId, startedAt: options.startedAt ?? this.#now() };
    this.#core = initialAgreement(this.#now());
    this.#state = options.replica.initial();
    const addresses = options.addresses ?? localIPv4s();
    this.#conns = new ConnectionManager({
      local: {
        nodeId: options.nodeId, cluster: clusterNameHash(options.clusterName), incarnation: options.incarnation, startedAt: this.#cfg.startedAt,
        apiPort: options.apiPort ?? 0, name: options.name ?? options.nodeId, version: options.version ?? '0.0.0', addresses,
      },
      secret: options.secret ?? null, host: options.host ?? '0.0.0.0', port: options.port ?? 0, log: this.#log, now: this.#now,
      ...(options.redial ? { redial: options.redial } : {}),
      onJoined: (c) => this.#onJoined(c),
      onLeft: (c, reason) => this.#onLeft(c, reason),
      onFrame: (c, f) => this.#onFrame(c, f),
    });
    this.#forwarder = new Forwarder<S>({
      timeoutMs: options.commandTimeoutMs ?? 10_000,
      role: () => this.role(),
      blocked: () => this.#noQuorumError(),
      send: (to, frame) => this.#conns.send(to, frame),
      execute: (kind, body) => this.#execute(kind, body),
      onRoleChange: (cb) => {
        this.on('role', cb);
        this.on('quorum', cb);
      },
      offRoleChange: (cb) => {
        this.off('role', cb);
        this.off('quorum', cb);
      },
    });
  }

  get port(): number {
    return this.#port;
  }

  async start(): Promise<number> {
    this.#restore();
    this.#port = await this.#conns.listen();
    const o = this.#o;
    this.#self = {
      nodeId: o.nodeId, name: o.name ?? o.nodeId, incarnation: o.incarnation, apiPort: o.apiPort ?? 0, peerPort: this.#port,
      version: o.version ?? '0.0.0', addresses: o.addresses ?? localIPv4s(),
    };
    for (const p of parsePeers(o.peers ?? [])) this.#conns.addTarget(p.host, p.port + (o.peerPortOffset ?? 0), 'static');
    if (o.mdns !== false) {
      const cluster = clusterNameHash(o.clusterName);
      this.#mdns = new MdnsDiscovery({
        advert: { nodeId: o.nodeId, cluster, port: this.#port, v: PROTOCOL_VERSION, incarnation: o.incarnation },
        addresses: this.#self.addresses, log: this.#log,
        onAdvert: (a, host) => {
          if (a.cluster !== cluster) this.#conns.noteHeard({ address: `${host}:${a.port}`, nodeId: a.nodeId, reason: 'other-cluster', detail: `cluster hash ${a.cluster}`, via: 'mdns' });
          else if (a.v !== PROTOCOL_VERSION) this.#conns.noteHeard({ address: `${host}:${a.port}`, nodeId: a.nodeId, reason: 'incompatible-version', detail: `protocol v${a.v}, mine v${PROTOCOL_VERSION}`, via: 'mdns' });
          else this.#conns.addTarget(host, a.port, 'mdns', a.nodeId, a.incarnation);
          this.#conns.tick();
        },
      });
      this.#mdns.start();
    }
    this.#conns.tick();
    this.#timer = setInterval(() => this.#tick(), this.#o.tickMs ?? 100);
    return this.#port;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#mdns?.stop();
    this.#forwarder.failAll(new TorusError('TORUS_SHUTTING_DOWN', 'cluster node is stopping'));
    await this.#conns.stop();
    if (this.#store && !this.#core.resync) this.#store.save(this.#state, this.#core.log);
    this.#store?.close();
  }

  /** Loads the saved state (if a data dir is set) before any peer can see this node's log position. */
  #restore(): void {
    const dir = this.#o.persistDir;
    if (!dir) return;
    const store = new StateStore<S>({
      dataDir: dir, replica: this.#o.replica, cluster: clusterNameHash(this.#o.clusterName), retain: this.#cfg.retainEntries,
      ...(this.#o.persistCompactEvery !== undefined ? { compactEvery: this.#o.persistCompactEvery } : {}), log: this.#log, now: this.#now,
    });
    const r = store.load();
    this.#store = store;
    if (lastIndex(r.log) === 0) return;
    const now = this.#now();
    this.#state = r.state;
    this.#core = initialAgreement(now, r.log);
    this.#feedMembers(now);
    this.#log.info('restored the saved cluster state', { index: lastIndex(r.log), replayed: r.replayed, digest: this.digest() });
    this.emit('restored', { index: lastIndex(r.log), digest: this.digest() });
  }

  /** After a run: the saved log gets what was applied; a snapshot install (or enough appends) saves a snapshot. */
  #persist(installed: boolean, applied: readonly IndexedEnvelope[], failed: boolean): void {
    const store = this.#store;
    if (!store || failed || this.#core.resync) return; // the state is not at the log's position: the resync will save
    if (installed || store.dueForSnapshot) store.save(this.#state, this.#core.log);
    else store.append(applied);
  }

  // ---- queries ----

  role(): RoleInfo {
    return { role: this.#core.role, term: this.#core.term, leader: this.#core.leader, quorum: this.#core.quorum };
  }

  /** The error a write gets while this node has no leader and no quorum (it cannot get one by waiting here). */
  #noQuorumError(): TorusError | null {
    const q = this.#core.quorum;
    // While still discovering (just started) peers may yet show up: the request waits for a leader instead.
    if (q.ok || this.#core.leader !== null || this.#core.role === 'discovering') return null;
    return new TorusError('TORUS_NO_QUORUM', `no quorum: this node ${q.why}; the cluster state is readable but takes no writes until a majority of its members is reachable`,
      { members: q.members, reached: q.reached, needed: q.needed });
  }

  get state(): S {
    return this.#state;
  }

  digest(): string {
    return this.#o.replica.digest(this.#state);
  }

  lastIndex(): number {
    return lastIndex(this.#core.log);
  }

  /** Joined peers (connected and authenticated), with what their hello said. */
  members(): { nodeId: string; incarnation: number; address: string; port: number; name: string; lastHeard: number | undefined }[] {
    return [...this.#conns.joined.values()].flatMap((c) => (c.remote ? [{
      nodeId: c.remote.nodeId, incarnation: c.remote.incarnation, address: c.remoteAddress, port: c.remote.port, name: c.remote.name,
      lastHeard: this.#core.lastHeard[c.remote.nodeId],
    }] : [])).sort((a, b) => a.nodeId.localeCompare(b.nodeId));
  }

  /** Heard but not joined, with the reason. */
  heard(): HeardPeer[] {
    return this.#conns.heard();
  }

  view(): Record<string, unknown> {
    return { nodeId: this.nodeId, ...this.role(), lastIndex: this.lastIndex(), digest: this.digest(), port: this.#port, members: this.members(), heard: this.heard() };
  }

  // ---- requests ----

  /** Sends events to the leader to be sequenced; resolves with their indices. */
  propose(events: EventBody | readonly EventBody[]): Promise<unknown> {
    return this.#forwarder.submit('propose', Array.isArray(events) ? [...events] : [events as EventBody]);
  }

  /** Runs a command on the leader (its `onCommand`), resolving with `{outcome, indices}` or rejecting with its error. */
  command(command: EventBody): Promise<unknown> {
    return this.#forwarder.submit('command', command);
  }

  // ---- leader-side execution ----

  async #execute(kind: 'propose' | 'command', body: EventBody | readonly EventBody[]): Promise<unknown> {
    if (kind === 'propose') return { indices: this.#sequence(Array.isArray(body) ? body : [body as EventBody]) };
    const handler = this.#o.onCommand;
    if (!handler) throw new TorusError('TORUS_INTERNAL', 'this node has no command handler');
    const result = await handler(body as EventBody, this.#state);
    if (this.#core.role !== 'leader') throw new TorusError('TORUS_NO_LEADER', 'leadership moved while the command ran; retry');
    return { outcome: result.outcome ?? null, indices: this.#sequence(result.events) };
  }

  /** Leader: checks the events apply (a bad one is refused, nothing is sequenced), then sequences them. */
  #sequence(events: readonly EventBody[]): number[] {
    if (this.#core.role !== 'leader') throw new TorusError('TORUS_NO_LEADER', 'not the leader', { retryable: true });
    if (events.length === 0) return [];
    const now = this.#now();
    let trial = this.#state;
    const first = lastIndex(this.#core.log) + 1;
    events.forEach((event, k) => {
      trial = this.#o.replica.apply(trial, { index: first + k, term: this.#core.term, event, at: now });
    });
    const r = this.#run({ kind: 'propose', now, events });
    return r.map((e) => e.index);
  }

  // ---- the loop ----

  #run(input: AgreementInput): readonly IndexedEnvelope[] {
    const r = step(this.#cfg, this.#core, input);
    this.#core = r.state;
    let failed: { index: number; reason: string } | null = null;
    let becameLeader = false;
    let installed = false;
    const applied: IndexedEnvelope[] = [];
    for (const fx of r.effects) {
      switch (fx.kind) {
        case 'send':
          this.#conns.send(fx.to, fx.frame);
          break;
        case 'apply':
          if (failed) break;
          try {
            this.#state = this.#o.replica.apply(this.#state, fx.entry);
            applied.push(fx.entry);
            this.emit('applied', fx.entry);
          } catch (err) {
            failed = { index: fx.entry.index, reason: asTorusError(err).message };
            this.#log.error('could not apply entry', { index: fx.entry.index, err });
          }
          break;
        case 'install':
          try {
            const next = this.#o.replica.decode(fx.snapshot.state);
            if (this.#o.replica.digest(next) !== fx.snapshot.digest) throw new TorusError('TORUS_PROTOCOL_INVALID', 'snapshot digest mismatch');
            this.#state = next;
            failed = null;
            installed = true;
            applied.length = 0;
            this.emit('installed', { index: fx.snapshot.index, digest: fx.snapshot.digest });
          } catch (err) {
            failed = { index: fx.snapshot.index, reason: `snapshot refused: ${asTorusError(err).message}` };
          }
          break;
        case 'send-snapshot':
          this.#conns.send(fx.to, { type: 'snapshot', term: fx.term, index: fx.index, lastTerm: fx.lastTerm, lastHash: fx.lastHash,
            digest: this.#o.replica.digest(this.#state), state: this.#o.replica.encode(this.#state) });
          break;
        case 'close':
          this.#conns.close(fx.nodeId, fx.reason);
          break;
        case 'role':
          if (fx.role === 'leader') becameLeader = true;
          this.#log.info('role', { role: fx.role, term: fx.term, leader: fx.leader });
          this.emit('role', { role: fx.role, term: fx.term, leader: fx.leader });
          break;
        case 'quorum':
          if (fx.quorum.ok) this.#log.info('quorum', { ...fx.quorum });
          else this.#log.warn('no quorum: not starting or keeping a term, writes are refused', { ...fx.quorum });
          this.emit('quorum', { ...this.role() });
          break;
        case 'warn':
          this.#log.warn(fx.msg, fx.fields);
          break;
      }
    }
    this.#persist(installed, applied, failed !== null);
    if (failed) this.#run({ kind: 'apply-failed', now: this.#now(), ...failed });
    this.#feedMembers(input.now);
    // Membership first: proposals waiting for a leader resume in a microtask, after this, so an event about
    // this node (e.g. its profile) never lands before its NodeJoined.
    if (becameLeader && this.#core.role === 'leader') this.#reconcile(input.now);
    return r.sequenced ?? [];
  }

  /** The core decides quorum on the membership the state lists: tell it when that changed. */
  #feedMembers(now: number): void {
    const members = this.#o.replica.members(this.#state).map((m) => m.nodeId).sort();
    const known = this.#core.members;
    if (members.length === known.length && members.every((id, i) => id === known[i])) return;
    this.#run({ kind: 'members', now, members });
  }

  #tick(): void {
    if (this.#stopped) return;
    const now = this.#now();
    this.#run({ kind: 'tick', now });
    this.#conns.tick();
    if (now - this.#lastGossip > 5000) {
      this.#lastGossip = now;
      this.#conns.gossip();
    }
    if (this.#core.role === 'leader') this.#reconcile(now);
  }

  /** Leader: NodeJoined for live nodes the state lacks (or knows under an older incarnation), NodeGone for silent ones. */
  #reconcile(now: number): void {
    const { joined, gone, held } = membershipChanges({
      selfId: this.nodeId, members: this.#o.replica.members(this.#state), now, failureTimeoutMs: this.#cfg.failureTimeoutMs,
      freshMs: this.#cfg.failureTimeoutMs / 2,
      live: [this.#self!, ...[...this.#conns.joined.keys()].flatMap((id) => this.#descriptors.get(id) ?? [])],
      lastHeard: this.#core.lastHeard, leaderSince: this.#core.leaderSince,
    });
    if (held && held !== this.#held) this.#log.warn('NodeGone held back', { why: held });
    this.#held = held ?? null;
    const events = [
      ...joined.map((d) => this.#o.replica.joinedEvent(d)),
      ...gone.map((g) => this.#o.replica.goneEvent(g.nodeId, `no heartbeat for ${g.silentMs} ms`)),
    ];
    if (events.length === 0) return;
    try {
      this.#sequence(events);
    } catch (err) {
      this.#log.error('membership events refused', { err });
    }
  }


  #onJoined(c: PeerConnection): void {
    const h = c.remote!;
    this.#descriptors.set(h.nodeId, { nodeId: h.nodeId, name: h.name, incarnation: h.incarnation, apiPort: h.apiPort, peerPort: h.port, version: h.version, addresses: h.addresses });
    this.#run({ kind: 'joined', now: this.#now(), nodeId: h.nodeId, incarnation: h.incarnation, startedAt: h.startedAt });
    this.emit('joined', h.nodeId);
    if (this.#core.role === 'leader') this.#reconcile(this.#now());
  }

  #onLeft(c: PeerConnection, reason: string): void {
    const id = c.remote!.nodeId;
    this.#run({ kind: 'left', now: this.#now(), nodeId: id });
    this.#forwarder.peerLost(id);
    this.emit('left', { nodeId: id, reason });
  }

  #onFrame(c: PeerConnection, f: PeerFrame): void {
    const from = c.remote!.nodeId;
    switch (f.type) {
      case 'forward':
        void this.#forwarder.serve(from, f);
        return;
      case 'forward-reply':
        this.#forwarder.reply(from, f);
        return;
      case 'heartbeat': case 'vote-request': case 'vote': case 'append': case 'gap-request': case 'snapshot-request': case 'snapshot':
        this.#run({ kind: 'frame', now: this.#now(), from, frame: f });
        return;
      default:
        c.close(`unexpected ${f.type} frame`, 'protocol-error');
    }
  }
}
