/**
 * ClusterNode: the shell around the agreement core. It owns the sockets (ConnectionManager), mDNS, the timer
 * and the replicated state; it feeds inputs to `step` and performs the effects in order. The cluster actor's
 * worker is a thin wrapper around it; tests and the lab fixture use it directly. Its parts: cluster-effects.ts
 * (performing effects), cluster-persistence.ts (the data dir), membership-reconciler.ts (the leader's
 * NodeJoined/NodeGone), peer-discovery.ts (static peers and mDNS).
 */
import { EventEmitter } from 'node:events';
import { TorusError } from '../core/errors.js';
import { createLogger, type Logger } from '../runtime/log.js';
import type { EventBody, IndexedEnvelope, PeerFrame } from '../protocols/peer-frames.js';
import { initialAgreement, step } from './agreement.js';
import { DEFAULT_TIMINGS, type AgreementConfig, type AgreementInput, type AgreementState } from './agreement-types.js';
import { clusterNameHash } from './auth.js';
import { ConnectionManager, type HeardPeer } from './connections.js';
import type { MdnsDiscovery } from './discovery.js';
import { entryAt, lastIndex, lastTerm } from './log.js';
import { CommitWaiters } from './commit-waiters.js';
import { performEffects, type EffectShell } from './cluster-effects.js';
import { ClusterPersistence } from './cluster-persistence.js';
import type { PeerConnection } from './peer-connection.js';
import type { NodeDescriptor } from './replicated-state.js';
import { Forwarder, type CommandResult } from './forwarder.js';
import { MembershipReconciler } from './membership-reconciler.js';
import { startPeerDiscovery } from './peer-discovery.js';
import { noQuorumError } from './quorum.js';
import { isRemoveMember, REMOVED_REASON, removalRefusal, removeMemberCommand, type RemovalOutcome } from './member-removal.js';

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
  readonly #membership: MembershipReconciler<S>;
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
  #flushScheduled = false;
  #wasLeader = false;
  /** Members the operator removed while no leader could write their NodeGone (member-removal.ts). */
  readonly #removed = new Set<string>();
  /** Of those, the ones whose NodeGone this node (as leader) already sequenced. */
  readonly #removalWritten = new Set<string>();

  constructor(options: ClusterNodeOptions<S>) {
    super();
    this.#o = options;
    this.nodeId = options.nodeId;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? createLogger({ component: 'cluster', node: options.nodeId });
    this.#cfg = { ...DEFAULT_TIMINGS, ...options.timings, selfId: options.nodeId, startedAt: options.startedAt ?? this.#now() };
    this.#core = initialAgreement(this.#now());
    this.#state = options.replica.initial();
    this.#membership = new MembershipReconciler(options.replica, this.#log, options.nodeId, this.#cfg.failureTimeoutMs);
    const addresses = options.addresses ?? localIPv4s();
    this.#conns = new ConnectionManager({
      local: {
        nodeId: options.nodeId, cluster: clusterNameHash(options.clusterName), incarnation: options.incarnation, startedAt: this.#cfg.startedAt,
        apiPort: options.apiPort ?? 0, name: options.name ?? options.nodeId, version: options.version ?? '0.0.0', addresses,
      },
      secret: options.secret ?? null, host: options.host ?? '0.0.0.0', port: options.port ?? 0, log: this.#log, now: this.#now,
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
    this.#persistence = new ClusterPersistence<S>({
      dataDir: options.persistDir, replica: options.replica, cluster: clusterNameHash(options.clusterName), retain: this.#cfg.retainEntries,
      compactEvery: options.persistCompactEvery, repair: options.repairState, fs: options.fs, log: this.#log, now: this.#now,
    });
    this.#waiters = new CommitWaiters(options.commandTimeoutMs ?? 10_000);
    this.#effects = {
      replica: options.replica, log: this.#log,
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
    this.#self = {
      nodeId: o.nodeId, name: o.name ?? o.nodeId, incarnation: o.incarnation, apiPort: o.apiPort ?? 0, peerPort: this.#port,
      version: o.version ?? '0.0.0', addresses: o.addresses ?? localIPv4s(),
    };
    this.#mdns = startPeerDiscovery({ options: o, conns: this.#conns, port: this.#port, addresses: this.#self.addresses, log: this.#log });
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
    this.#waiters.failAll(new TorusError('TORUS_SHUTTING_DOWN', 'cluster node is stopping before the write was committed'));
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
    this.#log.info('restored the saved cluster state', { index: r.commit, logged: lastIndex(r.log), replayed: r.replayed, term: this.#core.term, votedTerm: this.#core.votedTerm, mustJoin: r.mustJoin, digest: this.digest() });
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

  /** Operator removal of a dead member (member-removal.ts): refused for this node, an unknown or a connected one. */
  async removeMember(nodeId: string): Promise<RemovalOutcome> {
    const refusal = removalRefusal(this.#removalView(), nodeId);
    if (refusal) throw refusal;
    if (this.#core.leader !== null || this.#core.quorum.ok) {
      await this.command(removeMemberCommand(nodeId));
      return { nodeId, status: 'removed', message: `NodeGone(${nodeId}) written by the leader` };
    }
    this.#removed.add(nodeId);
    this.#log.warn('member removed by the operator while there is no leader: no longer counted toward the quorum', { nodeId });
    this.#feedMembers(this.#now());
    const q = this.#core.quorum;
    return { nodeId, status: 'pending', message: q.ok
      ? `no leader: ${nodeId} no longer counts toward this node's quorum (${q.why}); its NodeGone is written once a leader is elected`
      : `no leader: ${nodeId} no longer counts toward this node's quorum, which still fails (${q.why}): remove more dead members` };
  }

  #removalView(): { selfId: string; members: string[]; joined: ReadonlySet<string> } {
    return { selfId: this.nodeId, members: this.#o.replica.members(this.#state).map((m) => m.nodeId), joined: new Set(this.#conns.joined.keys()) };
  }

  // ---- leader-side execution ----

  async #execute(kind: 'propose' | 'command', body: EventBody | readonly EventBody[]): Promise<unknown> {
    if (kind === 'propose') return { indices: await this.#commit(Array.isArray(body) ? body : [body as EventBody]) };
    if (isRemoveMember(body as EventBody)) {
      const id = (body as EventBody & { nodeId: string }).nodeId;
      const refusal = removalRefusal(this.#removalView(), id);
      if (refusal) throw refusal;
      return { outcome: { nodeId: id }, indices: await this.#commit([this.#o.replica.goneEvent(id, REMOVED_REASON)]) };
    }
    const handler = this.#o.onCommand;
    if (!handler) throw new TorusError('TORUS_INTERNAL', 'this node has no command handler');
    const result = await handler(body as EventBody, this.#state);
    if (this.#core.role !== 'leader') throw new TorusError('TORUS_NO_LEADER', 'leadership moved while the command ran; retry');
    return { outcome: result.outcome ?? null, indices: await this.#commit(result.events) };
  }

  /** Sequences the events and answers once a quorum holds them (commit before acknowledge). */
  async #commit(events: readonly EventBody[]): Promise<number[]> {
    const indices = this.#sequence(events);
    if (indices.length === 0) return indices;
    const last = indices.at(-1)!;
    await this.#waiters.wait({ index: last, term: this.#core.term, event: events.at(-1)! });
    return indices;
  }

  /** Leader: checks the events apply (a bad one is refused, nothing is sequenced), then sequences them. */
  #sequence(events: readonly EventBody[]): number[] {
    if (this.#core.role !== 'leader') throw new TorusError('TORUS_NO_LEADER', 'not the leader', { retryable: true });
    if (events.length === 0) return [];
    const now = this.#now();
    let trial = this.#state;
    // The state is at the commit index (entries after it are not applied yet): the trial continues from there.
    const first = this.#core.commit + 1;
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
    const { applied, failed, becameLeader, installed, persist } = performEffects(this.#effects, r.effects);
    const core = this.#core;
    try {
      this.#persistence.afterRun({ state: this.#state, log: core.log, commit: core.commit, persist, installed, unsettled: failed !== null || core.resync !== null, mustJoin: core.mustJoin });
    } catch (err) {
      // Not written: not acknowledged (no flush report for it). Logged, the node keeps serving reads.
      this.#log.error('cannot write the cluster log; entries are not acknowledged', { err });
    }
    if (persist.length > 0 || installed) this.#scheduleFlush();
    this.#waiters.applied(applied);
    if (this.#core.role !== 'leader' && this.#waiters.size > 0) {
      const q = this.#core.quorum;
      this.#waiters.failAll(q.ok
        ? new TorusError('TORUS_NOT_COMMITTED', 'this node stopped leading before a quorum of the members held the write: not committed (a new leader may still commit it, or drop it)')
        : new TorusError('TORUS_NO_QUORUM', `no quorum: this node ${q.why}; the write was not committed`, { members: q.members, reached: q.reached, needed: q.needed }));
    }
    if (failed) this.#run({ kind: 'apply-failed', now: this.#now(), ...failed });
    this.#feedMembers(input.now);
    const won = this.#core.role === 'leader' && !this.#wasLeader;
    this.#wasLeader = this.#core.role === 'leader';
    if (becameLeader && this.#core.role === 'leader') {
      // A new term commits nothing of the earlier ones until an entry of its own commits: write one at once. Only
      // on winning: a leader that merely moves to a newer term (two leaders meeting) must not lengthen its log, or
      // the two would outrank each other in turn by their newest entry's term.
      if (won) this.#termEntry();
      // Membership first: proposals waiting for a leader resume in a microtask, after this, so an event about
      // this node (e.g. its profile) never lands before its NodeJoined.
      this.#reconcile(input.now);
    }
    return r.sequenced ?? [];
  }

  /**
   * The leader's first entry of its term (LeaderElected). On winning, always; after moving to a newer term without an
   * election (two leaders meeting), only when entries of older terms wait to commit (they commit through it) — and at
   * most once per term, so that two leaders do not lengthen their logs in turn.
   */
  #termEntry(): void {
    const core = this.#core;
    if (core.role !== 'leader' || lastTerm(core.log) >= core.term || this.#termEntryWritten === core.term) return;
    this.#termEntryWritten = core.term;
    this.#sequenceQuietly([this.#o.replica.leaderEvent(this.nodeId)]);
  }

  #termEntryWritten = 0;
  #seenTerm = 0;
  #termSince = 0;

  /** Group commit: one fsync after this turn of the event loop covers every entry written meanwhile. */
  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      if (this.#stopped) return;
      let index: number;
      try {
        index = this.#persistence.flush(this.#core.log);
      } catch (err) {
        this.#log.error('cannot fsync the cluster log; entries are not acknowledged', { err });
        return;
      }
      this.#run({ kind: 'persisted', now: this.#now(), index });
    });
  }

  /**
   * The core decides quorum on the membership: the one the log lists, committed or not (Raft's rule for
   * configurations: a node that has received a NodeJoined acts on it before it learns that it committed, so a
   * follower of a new cluster never takes itself for a fresh node alone). Tell the core when it changed.
   */
  #feedMembers(now: number): void {
    const listed = this.#o.replica.members(this.#logState()).map((m) => m.nodeId);
    for (const id of this.#removed) if (!listed.includes(id)) {
      this.#removed.delete(id);
      this.#removalWritten.delete(id);
    }
    const members = listed.filter((id) => !this.#removed.has(id)).sort();
    const known = this.#core.members;
    if (members.length === known.length && members.every((id, i) => id === known[i])) return;
    this.#run({ kind: 'members', now, members });
  }

  #spec: { commit: number; last: number; state: S; from: S } | null = null;

  /** The state with the log's uncommitted entries applied too (cached; recomputed only when the log moved). */
  #logState(): S {
    const core = this.#core;
    const last = lastIndex(core.log);
    if (last <= core.commit) return this.#state;
    const spec = this.#spec;
    if (spec && spec.from === this.#state && spec.commit === core.commit && spec.last === last) return spec.state;
    let state = spec && spec.from === this.#state && spec.commit === core.commit && spec.last < last ? spec.state : this.#state;
    const start = state === this.#state ? core.commit + 1 : spec!.last + 1;
    try {
      for (let i = start; i <= last; i++) state = this.#o.replica.apply(state, entryAt(core.log, i)!);
    } catch {
      return this.#state; // an entry that does not apply will fail at commit too (and resync): use what is committed
    }
    this.#spec = { commit: core.commit, last, state, from: this.#state };
    return state;
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
    if (this.#core.role === 'leader') {
      if (this.#core.term !== this.#seenTerm) {
        this.#seenTerm = this.#core.term;
        this.#termSince = now;
      }
      // Older-term entries stuck without an own-term entry after them (the term moved without an election): write
      // one, once the term has settled (not while two leaders that just met are still sorting out who leads).
      if (this.#core.commit < lastIndex(this.#core.log) && now - this.#termSince >= this.#cfg.heartbeatMs * 3) this.#termEntry();
      this.#reconcile(now);
    }
  }

  /** Leader: the membership events the state needs (membership-reconciler.ts), sequenced. */
  #reconcile(now: number): void {
    // Members the operator removed while leaderless: their NodeGone first (the membership rule would hold it).
    const due = [...this.#removed].filter((id) => !this.#removalWritten.has(id));
    if (due.length > 0) {
      try {
        due.forEach((id) => this.#removalWritten.add(id));
        this.#sequence(due.map((id) => this.#o.replica.goneEvent(id, REMOVED_REASON)));
      } catch (err) {
        this.#log.error('operator removals refused', { err });
      }
    }
    const events = this.#membership.events({
      // The state as the log lists it, pending entries included: a NodeJoined not yet committed is not repeated.
      state: this.#logState(), now, self: this.#self!, joined: this.#conns.joined.keys(), lastHeard: this.#core.lastHeard, leaderSince: this.#core.leaderSince,
    });
    if (events.length === 0) return;
    this.#sequenceQuietly(events);
  }

  /** Leader-written events (membership, the term's first entry): nobody waits for them. */
  #sequenceQuietly(events: readonly EventBody[]): void {
    try {
      this.#sequence(events);
    } catch (err) {
      this.#log.error('leader events refused', { err, types: events.map((e) => e.type) });
    }
  }

  #onJoined(c: PeerConnection): void {
    const h = c.remote!;
    this.#membership.noteJoined({ nodeId: h.nodeId, name: h.name, incarnation: h.incarnation, apiPort: h.apiPort, peerPort: h.port, version: h.version, addresses: h.addresses });
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
      case 'heartbeat': case 'vote-request': case 'vote': case 'append': case 'append-ack': case 'gap-request': case 'snapshot-request': case 'snapshot':
        this.#run({ kind: 'frame', now: this.#now(), from, frame: f });
        return;
      default:
        c.close(`unexpected ${f.type} frame`, 'protocol-error');
    }
  }
}
