/**
 * What the HTTP API needs from a running node. The lead implements it in `src/node/` against the actors;
 * tests implement it in-process over the pure topology core. Every method may throw a `TorusError`
 * (`src/protocols/errors.ts`): the API answers with that error's HTTP status, e.g. `TORUS_NO_LEADER` → 503
 * with a `Retry-After` hint, `TORUS_PLACEMENT_REFUSED` → 409 with the planner's reason in `details`.
 *
 * The shapes below are the API's *views*: plain JSON the CLI, the dashboard and scripts read (./views.ts maps
 * the topology keeper's state to them). The replicated state and events are the topology core's own types;
 * placement previews and ring results pass through as `unknown` until their owners' shapes settle.
 */

import type { IndexedEvent } from '../protocols/events.js';
import type { ClusterState } from '../actors/topology-keeper/state.js';
import type { Same, Shape } from '../protocols/schema-kit.js';
import type { ExecWorkload, RingWorkload } from '../protocols/workload-spec.js';
import type { responseSchemas } from './response-schemas.js';

/**
 * Each view is the `Shape<>` of its answer's schema (./response-schemas.ts, which the OpenAPI document serves):
 * a facade cannot return, and the CLI cannot read, a field or value the document does not allow.
 */
type Answer<K extends keyof typeof responseSchemas> = Shape<(typeof responseSchemas)[K]>;

/** GET /v1/node */
export type NodeInfo = Answer<'NodeInfo'>;
export type NodeRole = NodeInfo['role'];
/** Whether this node reaches a quorum of the members (without one it refuses writes: TORUS_NO_QUORUM). */
export type QuorumInfo = NonNullable<NodeInfo['quorum']>;

/**
 * GET /v1/state: the replicated state exactly as the topology keeper holds it (its type is the topology core's,
 * which the schema's open `state` object admits), `digest` = `stateDigest(state)`, `lastIndex` of the last event.
 */
export type StateView = Omit<Answer<'StateView'>, 'state'> & { readonly state: ClusterState };

/** GET /v1/topology: nodes, and one directed edge per working address (`source` reached `sink` at `ip`). */
export type TopologyView = Answer<'Topology'>;
export type TopologyNodeView = TopologyView['nodes'][number];
export type TopologyLinkView = TopologyView['links'][number];

/** A node that was heard but did not join, and why (never silently ignored). */
export type PeerView = Answer<'Peer'>;

/**
 * An instance with its ring order (`nodes`), runner statuses, plan and workload. The facade hands the server its
 * workload's real `env`; the server redacts every value on the way out (./redact.ts), which is what the schema says.
 */
export type InstanceView = Omit<Answer<'Instance'>, 'workload'> & {
  readonly workload: Unredacted<Answer<'Instance'>['workload']>;
};
type Unredacted<W> = Omit<W, 'env'> & { readonly env?: Readonly<Record<string, string>> };
// The answer's workload is a closed object built from the state's, so it must name every field a workload has
// (TypeScript's structural check alone would let an extra field through to the wire).
export type WorkloadFieldsAnswered = Assert<
  Same<Exclude<keyof RingWorkload | keyof ExecWorkload, keyof InstanceView['workload']>, never>
>;
type Assert<T extends true> = T;
export type RunnerView = InstanceView['runners'][number];

/** An applied event of the replicated log (src/protocols/events.ts); `index` is the SSE `id:`. */
export type { IndexedEvent };

/** A running benchmark's progress (the latest finished row of its table passes through from src/ring). */
export type RingBenchProgress = NonNullable<Answer<'BenchRun'>['progress']>;

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
  /** V8 heap in use per thread: `main` and each actor's worker (absent: it did not answer, see threadsUnanswered). */
  readonly threadHeapBytes?: Readonly<Record<string, number>>;
  /** V8 heap committed per thread (used plus what V8 keeps for the next allocations): what RSS sees of a heap. */
  readonly threadHeapTotalBytes?: Readonly<Record<string, number>>;
  /** The most each thread's heap may grow to: its budget (`--actor-heap`) or, for main, V8's default. */
  readonly threadHeapLimitBytes?: Readonly<Record<string, number>>;
  /** Per thread, the heap in use just after its last full collection (its live objects); absent before one. */
  readonly threadHeapLiveBytes?: Readonly<Record<string, number>>;
  /** Per thread, memory outside the V8 heap held by its JS objects (Buffers, ArrayBuffers). */
  readonly threadExternalBytes?: Readonly<Record<string, number>>;
  /** Per thread, what V8 itself has malloc'ed (its bookkeeping, compiled code metadata) outside the heap. */
  readonly threadMallocedBytes?: Readonly<Record<string, number>>;
  /** Per thread, full collections it ran because it had gone `--idle-gc-minutes` without one. */
  readonly threadIdleCollections?: Readonly<Record<string, number>>;
  /**
   * The threads that did not answer this sample (busy past the timeout, restarting), with the error: their
   * figures above are missing from this sample, not zero.
   */
  readonly threadsUnanswered?: Readonly<Record<string, string>>;
  /** Per thread, samples it did not answer since the node started. */
  readonly threadUnansweredTotal?: Readonly<Record<string, number>>;
  /** Questions about this node's role its cluster actor did not answer since the node started, by error code. */
  readonly clusterActorUnavailable?: Readonly<Record<string, number>>;
  /** Runner output that could not be written to its log files since the node started, bytes by stream. */
  readonly runnerLogDroppedBytes?: Readonly<Record<string, number>>;
  /** Artifacts in this node's store whose manifest does not verify (listed as damaged, not served). */
  readonly damagedArtifacts?: number;
}

/** POST /v1/links/measure: what the profiler will measure. */
export type MeasureLinksAnswer = Answer<'MeasureLinksQueued'>;
export type DeviceMeasuredAnswer = Answer<'DeviceMeasured'>;

/** DELETE /v1/members/:id: `removed` (NodeGone written) or `pending` (no leader yet: see src/actors/cluster/member-removal.ts). */
export type MemberRemovalAnswer = Answer<'MemberRemoved'> | Answer<'MemberRemovalPending'>;

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
  /** POST /v1/bench/pipeline: place, run the pipeline task, answer measured beside predicted; optional. */
  benchPipeline?(request: unknown): Promise<unknown>;
  metrics(): Promise<NodeMetrics>;
  /** A rank's log (stdout or stderr), from the node holding it; with `follow`, until the instance is no longer live. */
  runnerLog?(
    request: {
      readonly instanceId: string;
      readonly rank: number;
      readonly stream: 'stdout' | 'stderr';
      readonly follow: boolean;
      readonly tail?: number | undefined;
    },
    signal: AbortSignal,
  ): Promise<AsyncIterable<Uint8Array>>;
  /**
   * Asks the network profiler to re-measure this node's links now (all, or those matching `peer` / `ip`); resolves
   * with the links queued. Throws TORUS_API_NOT_FOUND when a filter matches no link. Optional: a node without a
   * profiler leaves it out and the route answers 503.
   */
  measureLinks?(request: {
    readonly peer?: string | undefined;
    readonly ip?: string | undefined;
  }): Promise<MeasureLinksAnswer>;
  /** Measures this node's memory bandwidth and compute again (about 2 s); optional like `measureLinks`. */
  measureDevice?(): Promise<DeviceMeasuredAnswer>;
  /**
   * Proposes a calibration's figures (src/protocols/calibration.ts) and resolves once this node applied them;
   * optional: without it POST /v1/calibrations answers 503.
   */
  recordCalibration?(event: import('../protocols/calibration.js').CalibrationRecorded): Promise<void>;
  /** The node's artifact service (src/artifacts); absent: the artifact routes answer 503. */
  readonly artifacts?: import('../artifacts/service.js').ArtifactService | undefined;
}
