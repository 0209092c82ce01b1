/**
 * What the HTTP API needs from a running node. The lead implements it in `src/node/` against the actors;
 * tests implement it in-process over the pure topology core. Every method may throw a `TorusError`
 * (`src/core/errors.ts`): the API answers with that error's HTTP status, e.g. `TORUS_NO_LEADER` → 503
 * with a `Retry-After` hint, `TORUS_PLACEMENT_REFUSED` → 409 with the planner's reason in `details`.
 *
 * The shapes below are the API's *views*: plain JSON the CLI, the dashboard and scripts read (./views.ts maps
 * the topology keeper's state to them). The replicated state and events are the topology core's own types;
 * placement previews and ring results pass through as `unknown` until their owners' shapes settle.
 */

import type { IndexedEvent } from '../protocols/events.js';
import type { ClusterState } from '../core/topology/state.js';

export type NodeRole = 'leader' | 'follower' | 'candidate' | 'alone';

/** GET /v1/node */
export interface NodeInfo {
  readonly id: string;
  readonly name: string;
  readonly version: string;
  /** Bumped on every process start of the same persisted node id. */
  readonly incarnation: number;
  readonly uptimeMs: number;
  readonly role: NodeRole;
  /** The current leader's id, when one is known. */
  readonly leaderId?: string | undefined;
  readonly cluster?: string | undefined;
  /** Whether this node reaches a quorum of the members (without one it refuses writes: TORUS_NO_QUORUM). */
  readonly quorum?: QuorumInfo | undefined;
}

export interface QuorumInfo {
  readonly ok: boolean;
  readonly members: number;
  readonly reached: number;
  readonly needed: number;
  readonly why?: string;
}

/** GET /v1/state: the replicated state exactly as the topology keeper holds it, with its digest. */
export interface StateView {
  readonly state: ClusterState;
  /** `stateDigest(state)` from src/core/topology/digest.ts: equal on every node that applied the same log. */
  readonly digest: string;
  /** Index of the last applied event (0 before any). */
  readonly lastIndex: number;
}

export interface TopologyNodeView {
  readonly id: string;
  readonly name?: string | undefined;
  readonly role?: NodeRole | undefined;
  /** Bytes. */
  readonly memory?: { readonly ramAvailable: number; readonly ramTotal: number } | undefined;
  readonly interfaces?: readonly { readonly name: string; readonly ip: string; readonly type: string }[] | undefined;
  readonly [extra: string]: unknown;
}

/** One directed edge per working address: `source` reached `sink` at `ip` (one of sink's interfaces). */
export interface TopologyLinkView {
  readonly source: string;
  readonly sink: string;
  readonly ip?: string | undefined;
  /** thunderbolt | ethernet | wifi | maybe_ethernet | unknown | rdma */
  readonly type?: string | undefined;
  readonly rttMs?: number | undefined;
  readonly bandwidthBps?: number | undefined;
  /** Epoch milliseconds of the last measurement. */
  readonly measuredAt?: number | undefined;
  readonly [extra: string]: unknown;
}

/** GET /v1/topology */
export interface TopologyView {
  readonly nodes: readonly TopologyNodeView[];
  readonly links: readonly TopologyLinkView[];
  readonly lastIndex?: number | undefined;
}

/** A node that was heard but did not join, and why (never silently ignored). */
export interface PeerView {
  readonly id?: string | undefined;
  readonly address: string;
  /** other-cluster | incompatible-version | auth-required | auth-failure | unreachable (src/cluster/heard.ts HeardReason) */
  readonly reason: string;
  readonly detail?: string | undefined;
  readonly lastHeardAt?: number | undefined;
  /** Refused dials so far, and when the next one is due (it backs off: 10 s doubling to 5 min). */
  readonly attempts?: number | undefined;
  readonly nextRetryAt?: number | undefined;
  readonly [extra: string]: unknown;
}

export interface RunnerView {
  readonly node: string;
  readonly rank?: number | undefined;
  /** Idle | Connecting | … | Ready | Running | ShuttingDown | Shutdown | Failed */
  readonly status: string;
  readonly reason?: string | undefined;
  readonly restarts?: number | undefined;
  readonly [extra: string]: unknown;
}

/** An instance with its ring order (`nodes`) and runner statuses. Other plan fields pass through. */
export interface InstanceView {
  readonly id: string;
  readonly nodes: readonly string[];
  readonly runners: readonly RunnerView[];
  readonly backend?: string | undefined;
  readonly sharding?: string | undefined;
  readonly status?: string | undefined;
  readonly [extra: string]: unknown;
}

/** An applied event of the replicated log (src/protocols/events.ts); `index` is the SSE `id:`. */
export type { IndexedEvent };

export interface RingBenchProgress {
  readonly done: number;
  readonly total: number;
  readonly message?: string | undefined;
  /** The latest finished row of the table, if any (passthrough from src/ring). */
  readonly row?: unknown;
}

/** The benchmark's table as JSON (owned by src/ring; passthrough). */
export type RingBenchResult = unknown;

export interface RingBenchStarted {
  /** Settles when the run ends; rejects with a TorusError when it fails. */
  readonly result: Promise<RingBenchResult>;
}

/** Numbers /metrics needs that are not in the topology or instance views. */
export interface NodeMetrics {
  /** Restarts per supervised actor name (and `runner:<instance>` entries if the node counts them). */
  readonly restarts: Readonly<Record<string, number>>;
}

/** POST /v1/links/measure: what the profiler will measure. */
export interface MeasureLinksAnswer {
  readonly links: readonly { readonly sink: string; readonly ip: string; readonly type?: string | undefined; readonly measuredAt?: number | undefined }[];
  /** Links waiting for the profiler's next measuring pass. */
  readonly queued?: number | undefined;
}

/** DELETE /v1/members/:id: `removed` (NodeGone written) or `pending` (no leader yet: see src/cluster/member-removal.ts). */
export interface MemberRemovalAnswer {
  readonly nodeId: string;
  readonly status: 'removed' | 'pending';
  readonly message: string;
}

export interface NodeFacade {
  node(): Promise<NodeInfo>;
  /** Operator removal of a dead member (refused: itself, unknown, connected). */
  removeMember(nodeId: string): Promise<MemberRemovalAnswer>;
  state(): Promise<StateView>;
  topology(): Promise<TopologyView>;
  peers(): Promise<readonly PeerView[]>;
  /** Request as the `plan` command (validated by the API); returns every option, plan or refusal. */
  previewPlacements(request: unknown): Promise<unknown>;
  /** Goes to the leader: resolves with the placed instance, or throws TORUS_PLACEMENT_REFUSED / TORUS_NO_LEADER. */
  createInstance(request: unknown): Promise<InstanceView>;
  listInstances(): Promise<readonly InstanceView[]>;
  /** Throws TORUS_INSTANCE_UNKNOWN when absent. */
  getInstance(id: string): Promise<InstanceView>;
  /** Throws TORUS_INSTANCE_UNKNOWN when absent; resolves once the delete event is applied. */
  deleteInstance(id: string): Promise<void>;
  /**
   * Every applied event with index > `afterIndex`, in order: first those still retained, then live ones,
   * until `signal` aborts (the iterator must then return promptly). If the retained log no longer reaches
   * back to `afterIndex + 1` it simply starts later; the API notices the gap and tells the client.
   * `EventFeed` (./event-feed.ts) implements this over an append-only buffer.
   */
  events(afterIndex: number, signal: AbortSignal): AsyncIterable<IndexedEvent>;
  /**
   * Starts a ring benchmark; resolves once it is running (rejects with a TorusError when it cannot start:
   * unknown node, no leader, placement refused). `onProgress` is called as it proceeds.
   */
  startRingBench(request: unknown, onProgress: (progress: RingBenchProgress) => void): Promise<RingBenchStarted>;
  metrics(): Promise<NodeMetrics>;
  /** A rank's log (stdout or stderr), from the node holding it; with `follow`, until the instance is no longer live. */
  runnerLog?(request: { readonly instanceId: string; readonly rank: number; readonly stream: 'stdout' | 'stderr'; readonly follow: boolean; readonly tail?: number | undefined }, signal: AbortSignal): Promise<AsyncIterable<Uint8Array>>;
  /**
   * Asks the network profiler to re-measure this node's links now (all, or those matching `peer` / `ip`); resolves
   * with the links queued. Throws TORUS_API_NOT_FOUND when a filter matches no link. Optional: a node without a
   * profiler leaves it out and the route answers 503.
   */
  measureLinks?(request: { readonly peer?: string | undefined; readonly ip?: string | undefined }): Promise<MeasureLinksAnswer>;
  /** The node's artifact service (src/artifacts, issue 15); absent: the artifact routes answer 503. */
  readonly artifacts?: import('../artifacts/service.js').ArtifactService | undefined;
}
