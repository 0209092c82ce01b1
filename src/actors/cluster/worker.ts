/**
 * The thread that owns the replicated state: the topology keeper's worker, in which the cluster's agreement runs.
 * ClusterNode (src/actors/cluster/cluster-node.ts) owns the sockets, mDNS, timers and the log; the state it applies
 * committed entries to is the one copy on this node, and the keeper's read requests answer from it directly
 * (src/actors/topology-keeper/queries.ts). Started as `topology-keeper` with the alias `cluster` (node/actor-specs.ts).
 *
 * Agreement requests: `propose {event | events}` → {indices}; `command {command}` → the leader's outcome (an
 * object, with `indices` added; a non-object outcome comes as {outcome, indices}) or the leader's error; `peers` →
 * heard-but-not-joined list ({address, id, nodeId, reason, detail, via, at}); `members` → joined
 * peers; `role` → {role, term, leader, quorum: {ok, members, reached, needed, why}}.
 * Keeper requests: `state`, `topology`, `instances`, `instance {id}`, `placementState`, `toReplace`, `state-snapshot`.
 * Commands run on the leader through `options.commandHandler` (an address, default `commands`): it is asked
 * `{type: 'handle-command', command, state}` and must answer `{events, outcome?}` or throw a TorusError.
 *
 * Subscribers follow the committed stream by index: each applied entry goes to `options.eventsTo` (default
 * `node-events`) as `{type: 'applied', entries}`, in log order; when the state is replaced rather than advanced (a
 * snapshot installed, the saved state restored) they get `{type: 'state-replaced', lastIndex, digest}` and read
 * the state again. With `agreement: false` (an embedder that runs the keeper without the cluster) there is no
 * ClusterNode and the keeper answers on the empty state.
 */
import { serveActor } from '../../runtime/serve-actor.js';
import { ClusterNode } from './cluster-node.js';
import { topologyReplica } from './topology-state.js';
import { emptyState, type ClusterState } from '../topology-keeper/state.js';
import {
  digestOf,
  instanceAnswer,
  instancesAnswer,
  placementStateAnswer,
  replicaView,
  snapshotAnswer,
  stateAnswer,
  toReplaceAnswer,
  topologyAnswer,
} from '../topology-keeper/queries.js';
import { decodeInstanceRequest } from '../topology-keeper/messages.js';
import type { EventBody } from '../../protocols/peer-frames.js';
import { clusterMachine } from './machine.js';
import { TorusError } from '../../protocols/errors.js';
import { decodeClusterActorEvent, decodeCommandRequest, decodePropose } from './messages.js';

export interface ClusterActorOptions {
  readonly nodeId: string;
  readonly incarnation: number;
  readonly startedAt?: number;
  readonly clusterName?: string;
  readonly secret?: string | null;
  readonly peers?: readonly string[];
  readonly host?: string;
  /** Cluster listen port; default apiPort + 1 (0 when apiPort is 0). */
  readonly port?: number;
  readonly apiPort?: number;
  readonly name?: string;
  readonly version?: string;
  readonly mdns?: boolean;
  readonly failureTimeoutMs?: number;
  readonly maxPendingHandshakes?: number;
  /** When peers are given as API ports (the CLI's `--peers host:apiPort`), the cluster port is that + this. */
  readonly peerPortOffset?: number;
  /** Where applied entries and state replacements go (default `node-events`, the host's feed); null: nowhere. */
  readonly eventsTo?: string | null;
  /** false: the keeper without the agreement (no sockets, the empty state); default true. */
  readonly agreement?: boolean;
  readonly commandHandler?: string;
  /** The node's data dir: the replicated state is saved there and restored at start (src/actors/cluster/storage/state-store.ts). */
  readonly dataDir?: string;
  /** Set false to keep the state in memory only. */
  readonly persist?: boolean;
  /** `--repair-state`: a damaged saved state is repaired (readable part kept) instead of refused. */
  readonly repairState?: boolean;
}

let node: ClusterNode<ClusterState> | null = null;
const live = (): ClusterNode<ClusterState> => {
  if (!node) throw new TorusError('TORUS_ACTOR_UNKNOWN', 'this node runs the topology keeper without the cluster');
  return node;
};
/** The one applied copy: the agreement's state, or the empty state when the keeper runs without it. */
const applied = (): ClusterState => node?.state ?? emptyState;

serveActor<typeof clusterMachine, ClusterActorOptions>({
  name: 'topology-keeper',
  machine: clusterMachine,
  input: (options) => ({ nodeId: options.nodeId }),
  decodeEvent: (body) => decodeClusterActorEvent(body),
  view: (snapshot) => ({ value: snapshot.value, ...snapshot.context }),
  requests: {
    state: () => stateAnswer(applied()),
    topology: () => topologyAnswer(applied()),
    instances: () => instancesAnswer(applied()),
    instance: (body) => instanceAnswer(applied(), decodeInstanceRequest(body).id),
    placementState: () => placementStateAnswer(applied()),
    toReplace: () => toReplaceAnswer(applied()),
    'state-snapshot': () => snapshotAnswer(applied()),
    propose: (body) => live().propose(decodePropose(body)),
    command: async (body) => {
      const { outcome, indices } = (await live().command(decodeCommandRequest(body))) as {
        outcome: unknown;
        indices: number[];
      };
      // The caller wants the leader's outcome (e.g. {instanceId}); the log positions ride along when it is an object.
      return outcome !== null && typeof outcome === 'object' && !Array.isArray(outcome)
        ? { ...outcome, indices }
        : { outcome, indices };
    },
    peers: () =>
      live()
        .heard()
        .map((h) => ({ ...h, ...(h.nodeId ? { id: h.nodeId } : {}) })),
    members: () => live().members(),
    // DELETE /v1/members/:id (src/api/routes/member-routes.ts): the operator's removal of a dead member.
    'remove-member': (body) => {
      const nodeId = (body as { nodeId?: unknown }).nodeId;
      if (typeof nodeId !== 'string' || nodeId.length === 0 || nodeId.length > 128)
        throw new TorusError('TORUS_API_VALIDATION', 'nodeId: expected a node id', { field: 'nodeId' });
      return live().removeMember(nodeId);
    },
    role: () => live().role(),
  },
  setup: async (ctx) => {
    const o = ctx.options;
    const progress = (state: ClusterState) => ctx.actor.send({ type: 'cluster.progress', ...replicaView(state) });
    progress(emptyState);
    if (o.agreement === false) return;
    const eventsTo = o.eventsTo === undefined ? 'node-events' : o.eventsTo;
    const apiPort = o.apiPort ?? 0;
    const n = new ClusterNode<ClusterState>({
      nodeId: o.nodeId,
      incarnation: o.incarnation,
      clusterName: o.clusterName ?? 'torus',
      replica: topologyReplica,
      secret: o.secret ?? null,
      peers: o.peers ?? [],
      host: o.host ?? '0.0.0.0',
      port: o.port ?? (apiPort ? apiPort + 1 : 0),
      peerPortOffset: o.peerPortOffset ?? (o.port === undefined && apiPort ? 1 : 0),
      apiPort,
      ...(o.startedAt !== undefined ? { startedAt: o.startedAt } : {}),
      ...(o.name !== undefined ? { name: o.name } : {}),
      ...(o.version !== undefined ? { version: o.version } : {}),
      ...(o.mdns !== undefined ? { mdns: o.mdns } : {}),
      ...(o.maxPendingHandshakes !== undefined ? { maxPendingHandshakes: o.maxPendingHandshakes } : {}),
      ...(o.failureTimeoutMs !== undefined ? { timings: { failureTimeoutMs: o.failureTimeoutMs } } : {}),
      ...(o.dataDir && o.persist !== false ? { persistDir: o.dataDir } : {}),
      ...(o.repairState ? { repairState: true } : {}),
      log: ctx.log,
      onCommand: async (command: EventBody, state: ClusterState) =>
        ctx.request<{ events: EventBody[]; outcome?: unknown }>(o.commandHandler ?? 'commands', {
          type: 'handle-command',
          command,
          state,
        }),
    });
    node = n;
    const members = () =>
      ctx.actor.send({ type: 'cluster.members', members: n.members().map((m) => m.nodeId), heard: n.heard().length });
    // The state was replaced, not advanced: subscribers cannot continue by index and read it again.
    const replaced = () => {
      const s = n.state;
      if (eventsTo) ctx.send(eventsTo, { type: 'state-replaced', lastIndex: s.lastIndex, digest: digestOf(s) });
      progress(s);
    };
    n.on(
      'role',
      (r: { role: 'discovering' | 'follower' | 'candidate' | 'leader'; term: number; leader: string | null }) =>
        ctx.actor.send({ type: 'cluster.role', ...r }),
    );
    n.on('applied', (indexed: unknown) => {
      if (eventsTo) ctx.send(eventsTo, { type: 'applied', entries: [indexed] });
      progress(n.state);
    });
    n.on('restored', replaced);
    n.on('installed', replaced);
    n.on('quorum', (r: { quorum: { ok: boolean; reached: number; members: number; needed: number } }) => {
      const { ok, reached, members: count, needed } = r.quorum;
      ctx.actor.send({ type: 'cluster.quorum', ok, reached, members: count, needed });
    });
    n.on('joined', members);
    n.on('left', members);
    await n.start();
    return async () => {
      await n.stop();
      node = null;
    };
  },
});
