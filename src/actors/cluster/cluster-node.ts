/**
 * ClusterNode: the shell around the agreement core. It owns the sockets (ConnectionManager), mDNS, the timer
 * and the replicated state; it feeds inputs to `step` and performs the effects in order. The cluster actor's
 * worker is a thin wrapper around it; tests and the lab fixture use it directly. Its parts: cluster-effects.ts
 * (performing effects), cluster-persistence.ts (the data dir) with group-flush.ts (one fsync per group),
 * leader-writes.ts (callers' writes: checked, sequenced, answered once committed; the leader's own writes are the
 * core's, agreement/own-writes.ts), pending-state.ts (the state as the log lists it), peer-discovery.ts (static
 * peers and mDNS), peer-inputs.ts (what a peer's frames and joining become for the core), cluster-view.ts (the
 * joined members as queries list them), member-removal.ts (an operator's removal).
 */
import { EventEmitter } from 'node:events';
import { TorusError } from '../../protocols/errors.js';
import { createLogger, type Logger } from '../../runtime/log.js';
import type { EventBody, IndexedEnvelope, PeerFrame } from '../../protocols/peer-frames.js';
import { initialAgreement, step } from './agreement/agreement.js';
import {
  DEFAULT_TIMINGS,
  type AgreementConfig,
  type AgreementInput,
  type AgreementState,
  type MemberRecord,
} from './agreement/types.js';
import { clusterNameHash } from './transport/auth.js';
import { ConnectionManager, type HeardPeer } from './transport/connections.js';
import type { MdnsDiscovery } from './transport/discovery.js';
import { lastIndex } from './agreement/log.js';
import { CommitWaiters } from './commit-waiters.js';
import { performEffects, type EffectShell } from './cluster-effects.js';
import { ClusterPersistence } from './storage/cluster-persistence.js';
import type { PeerConnection } from './transport/peer-connection.js';
import type { NodeDescriptor } from './agreement/state-machine.js';
import { Forwarder } from './transport/forwarder.js';
import { startPeerDiscovery } from './transport/peer-discovery.js';
import { noQuorumError } from './agreement/quorum.js';
import { removeMember, type RemovalOutcome, type RemovalView } from './member-removal.js';
import { dispatchFrame, joinedInput } from './peer-inputs.js';
import { joinedMembers, type JoinedMember } from './cluster-view.js';
import { GroupFlush } from './storage/group-flush.js';
import { LeaderWrites } from './leader-writes.js';
import { PendingState } from './agreement/pending-state.js';
import {
  localIPv4s,
  ownWrites,
  selfDescriptor,
  type ClusterNodeOptions,
  type RoleInfo,
} from './cluster-node-options.js';

export class ClusterNode<S> extends EventEmitter {
  readonly nodeId: string;
  readonly #o: ClusterNodeOptions<S>;
  #cfg: AgreementConfig;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #conns: ConnectionManager;
  readonly #forwarder: Forwarder<S>;
  #core: AgreementState;
  #state: S;
  #mdns: MdnsDiscovery | null = null;
  #timer: NodeJS.Timeout | null = null;
  #port = 0;
  #lastGossip = 0;
  #stopped = false;
  #self: NodeDescriptor | null = null;
  readonly #persistence: ClusterPersistence<S>;
  readonly #effects: EffectShell<S>;
  readonly #waiters: CommitWaiters;
  readonly #flush: GroupFlush;
  readonly #writes: LeaderWrites<S>;
  readonly #pending: PendingState<S>;

  constructor(options: ClusterNodeOptions<S>) {
    super();
    this.#o = options;
    this.nodeId = options.nodeId;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? createLogger({ component: 'cluster', node: options.nodeId });
    this.#cfg = {
      ...DEFAULT_TIMINGS,
      ...options.timings,
      selfId: options.nodeId,
      startedAt: options.startedAt ?? this.#now(),
    };
    this.#core = initialAgreement(this.#now());
    this.#state = options.replica.initial();
    const addresses = options.addresses ?? localIPv4s();
    this.#conns = new ConnectionManager({
      local: {
        nodeId: options.nodeId,
        cluster: clusterNameHash(options.clusterName),
        incarnation: options.incarnation,
        startedAt: this.#cfg.startedAt,
        apiPort: options.apiPort ?? 0,
        name: options.name ?? options.nodeId,
        version: options.version ?? '0.0.0',
        addresses,
      },
      secret: options.secret ?? null,
      host: options.host ?? '0.0.0.0',
      port: options.port ?? 0,
      log: this.#log,
      now: this.#now,
      ...(options.redial ? { redial: options.redial } : {}),
      ...(options.maxPendingHandshakes !== undefined ? { maxPendingHandshakes: options.maxPendingHandshakes } : {}),
      onJoined: (c) => this.#onJoined(c),
      onLeft: (c, reason) => this.#onLeft(c, reason),
      onFrame: (c, f) => this.#onFrame(c, f),
    });
    this.#forwarder = new Forwarder<S>({
      timeoutMs: options.commandTimeoutMs ?? 10_000,
      role: () => this.role(),
      blocked: () => noQuorumError(this.#core.quorum, this.#core.leader, this.#core.role),
      send: (to, frame) => this.#conns.send(to, frame),
      execute: (kind, body) => this.#writes.execute(kind, body),
      onRoleChange: (cb) => void this.on('role', cb).on('quorum', cb),
      offRoleChange: (cb) => void this.off('role', cb).off('quorum', cb),
    });
    this.#persistence = new ClusterPersistence<S>({
      dataDir: options.persistDir,
      replica: options.replica,
      cluster: clusterNameHash(options.clusterName),
      retain: this.#cfg.retainEntries,
      retainBytes: this.#cfg.retainBytes,
      compactEvery: options.persistCompactEvery,
      repair: options.repairState,
      fs: options.fs,
      log: this.#log,
      now: this.#now,
    });
    this.#waiters = new CommitWaiters(options.commandTimeoutMs ?? 10_000);
    this.#flush = new GroupFlush({
      flush: () => this.#persistence.flush(this.#core.log),
      onDurable: (index) => this.#run({ kind: 'persisted', now: this.#now(), index }),
      stopped: () => this.#stopped,
      log: this.#log,
    });
    this.#pending = new PendingState(options.replica);
    this.#writes = new LeaderWrites<S>({
      replica: options.replica,
      waiters: this.#waiters,
      onCommand: options.onCommand,
      core: () => this.#core,
      state: () => this.#state,
      removalView: () => this.#removalView(),
      run: (input) => this.#run(input),
      now: this.#now,
    });
    this.#effects = {
      replica: options.replica,
      log: this.#log,
      getState: () => this.#state,
      setState: (state) => {
        this.#state = state;
      },
      send: (to, frame) => this.#conns.send(to, frame),
      close: (nodeId, reason) => this.#conns.close(nodeId, reason),
      emit: (event, payload) => this.emit(event, payload),
      role: () => this.role(),
      saveVote: (vote) => {
        this.#persistence.saveVote(vote);
        this.emit('vote', vote);
      },
    };
  }

  get port(): number {
    return this.#port;
  }

  async start(): Promise<number> {
    this.#restore();
    this.#port = await this.#conns.listen();
    const o = this.#o;
    this.#self = selfDescriptor(o, this.#port);
    // The leader's own writes are decided by the core (agreement/own-writes.ts), from the replica's event makers.
    this.#cfg = { ...this.#cfg, writes: ownWrites(o.replica, this.#self) };
    this.#mdns = startPeerDiscovery({
      options: o,
      conns: this.#conns,
      port: this.#port,
      addresses: this.#self.addresses,
      log: this.#log,
    });
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
    this.#waiters.failAll(
      new TorusError('TORUS_SHUTTING_DOWN', 'cluster node is stopping before the write was committed'),
    );
    await this.#conns.stop();
    this.#persistence.close(this.#state, this.#core.commit, this.#core.log, this.#core.resync !== null);
  }

  /** Loads the saved state (if a data dir is set) before any peer can see this node's log position. */
  #restore(): void {
    const r = this.#persistence.load();
    if (!r) return;
    const now = this.#now();
    this.#state = r.state;
    this.#core = initialAgreement(now, r.log, { commit: r.commit, vote: r.vote, mustJoin: r.mustJoin });
    if (lastIndex(r.log) === 0 && !r.vote && !r.mustJoin) return; // nothing saved yet: a fresh node
    this.#feedMembers(now);
    this.#log.info('restored the saved cluster state', {
      index: r.commit,
      logged: lastIndex(r.log),
      replayed: r.replayed,
      term: this.#core.term,
      votedTerm: this.#core.votedTerm,
      mustJoin: r.mustJoin,
      digest: this.digest(),
    });
    if (r.commit > 0) this.emit('restored', { index: r.commit, digest: this.digest() });
  }

  // ---- queries ----

  role(): RoleInfo {
    return { role: this.#core.role, term: this.#core.term, leader: this.#core.leader, quorum: this.#core.quorum };
  }

  get state(): S {
    return this.#state;
  }

  digest(): string {
    return this.#o.replica.digest(this.#state);
  }

  /** Last applied (= committed) index: what the state reflects. */
  lastIndex(): number {
    return this.#core.commit;
  }

  /** Last index in the log (committed or not). */
  logIndex(): number {
    return lastIndex(this.#core.log);
  }

  /** Joined peers (connected and authenticated), with what their hello said. */
  members(): JoinedMember[] {
    return joinedMembers(this.#conns.joined.values(), this.#core.lastHeard);
  }

  /** Heard but not joined, with the reason. */
  heard(): HeardPeer[] {
    return this.#conns.heard();
  }

  view(): Record<string, unknown> {
    return {
      nodeId: this.nodeId,
      ...this.role(),
      lastIndex: this.lastIndex(),
      digest: this.digest(),
      port: this.#port,
      members: this.members(),
      heard: this.heard(),
    };
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

  /** Operator removal of a dead member (member-removal.ts): refused for this node, an unknown or a connected one. */
  removeMember(nodeId: string): Promise<RemovalOutcome> {
    return removeMember(
      {
        view: this.#removalView(),
        core: this.#core,
        command: (body) => this.command(body),
        remove: (id) => this.#run({ kind: 'remove', now: this.#now(), nodeId: id }),
        log: this.#log,
      },
      nodeId,
    );
  }

  #removalView(): RemovalView {
    return {
      selfId: this.nodeId,
      members: this.#o.replica.members(this.#state).map((m) => m.nodeId),
      joined: new Set(this.#conns.joined.keys()),
    };
  }

  // ---- the loop ----

  #run(input: AgreementInput): readonly IndexedEnvelope[] {
    const r = step(this.#cfg, this.#core, input);
    this.#core = r.state;
    const { applied, failed, installed, persist } = performEffects(this.#effects, r.effects);
    const core = this.#core;
    try {
      this.#persistence.afterRun({
        state: this.#state,
        log: core.log,
        commit: core.commit,
        persist,
        installed,
        unsettled: failed !== null || core.resync !== null,
        mustJoin: core.mustJoin,
      });
    } catch (err) {
      // Not written: not acknowledged (no flush report for it). Logged, the node keeps serving reads.
      this.#log.error('cannot write the cluster log; entries are not acknowledged', { err });
    }
    if (persist.length > 0 || installed) this.#flush.schedule();
    this.#waiters.applied(applied);
    if (this.#core.role !== 'leader') this.#waiters.leadershipLost(this.#core.quorum);
    if (failed) this.#run({ kind: 'apply-failed', now: this.#now(), ...failed });
    this.#feedMembers(input.now);
    return r.sequenced ?? [];
  }

  /**
   * The core decides quorum on the membership: the one the log lists, committed or not (Raft's rule for
   * configurations: a node that has received a NodeJoined acts on it before it learns that it committed, so a
   * follower of a new cluster never takes itself for a fresh node alone). Tell the core when it changed.
   */
  #feedMembers(now: number): void {
    const listed = this.#o.replica
      .members(this.#logState())
      .map((m) => ({ nodeId: m.nodeId, incarnation: m.incarnation }))
      .sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
    const known = this.#core.listed;
    const same = (m: MemberRecord, i: number) =>
      m.nodeId === known[i]?.nodeId && m.incarnation === known[i].incarnation;
    if (listed.length === known.length && listed.every(same)) return;
    this.#run({ kind: 'members', now, members: listed });
  }

  /** The state with the log's uncommitted entries applied too (pending-state.ts). */
  #logState(): S {
    return this.#pending.of(this.#core, this.#state);
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
  }

  #onJoined(c: PeerConnection): void {
    const h = c.remote!;
    this.#run(joinedInput(h, this.#now()));
    this.emit('joined', h.nodeId);
  }

  #onLeft(c: PeerConnection, reason: string): void {
    const id = c.remote!.nodeId;
    this.#run({ kind: 'left', now: this.#now(), nodeId: id });
    this.#forwarder.peerLost(id);
    this.emit('left', { nodeId: id, reason });
  }

  #onFrame(c: PeerConnection, f: PeerFrame): void {
    dispatchFrame(
      {
        forwarder: this.#forwarder,
        replica: this.#o.replica,
        log: this.#log,
        run: (from, frame) => this.#run({ kind: 'frame', now: this.#now(), from, frame }),
      },
      c,
      f,
    );
  }
}
