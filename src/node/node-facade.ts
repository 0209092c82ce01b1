/**
 * The API's view of this node, implemented over the actors: reads go to the topology keeper (the replicated
 * state), cluster questions to the cluster actor, plans to the placement planner, and writes become commands
 * the cluster forwards to the leader.
 */
import { TorusError } from '../protocols/errors.js';
import type { StateAnswer } from '../actors/topology-keeper/queries.js';
import type { EventFeed } from '../api/event-feed.js';
import { waitForState } from '../api/wait-for-state.js';
import {
  runLivePipelineBench,
  type PipelineBenchRequest,
  type PipelineBenchResult,
} from '../bench/live/pipeline-bench-live.js';
import type {
  InstanceView,
  DeviceMeasuredAnswer,
  MeasureLinksAnswer,
  MemberRemovalAnswer,
  NodeFacade,
  NodeInfo,
  NodeMetrics,
  NodeRole,
  QuorumInfo,
  PeerView,
  RingBenchProgress,
  RingBenchStarted,
  StateView,
  TopologyView,
} from '../api/node-facade.js';
import { instanceView, instanceViews, topologyView } from '../api/views.js';
import type { ClusterEvent, IndexedEvent } from '../protocols/events.js';
import type { Runtime } from '../runtime/runtime.js';
import { threadHeap, watchLiveHeap } from '../runtime/thread-heap.js';
import type { NodeConfig } from './config.js';
import type { ArtifactService } from '../artifacts/service.js';
import type { PeerSigner } from '../protocols/peer-http-proof.js';
import { openRunnerLog, type LogRequest } from '../actors/runner-supervisor/runners/runner-logs.js';

export interface FacadeContext {
  readonly runtime: Runtime;
  readonly config: NodeConfig;
  readonly nodeId: string;
  readonly incarnation: number;
  readonly name: string;
  readonly version: string;
  readonly startedAt: number;
  readonly feed: EventFeed;
  readonly ringBench?: (
    request: unknown,
    onProgress: (p: RingBenchProgress) => void,
    facade: NodeFacade,
  ) => Promise<RingBenchStarted>;
  readonly artifacts?: ArtifactService;
  /** Proves this node to other nodes' APIs (a followed log of a rank held elsewhere). */
  readonly signPeer: PeerSigner;
}

interface RoleAnswer {
  readonly role: NodeRole;
  readonly leaderId?: string | undefined;
  readonly quorum?: QuorumInfo | undefined;
}

const COMMAND_TIMEOUT_MS = 30_000;

export class ActorNodeFacade implements NodeFacade {
  readonly #ctx: FacadeContext;

  constructor(ctx: FacadeContext) {
    this.#ctx = ctx;
    watchLiveHeap(); // the main thread's; each actor's worker watches its own
  }

  get artifacts(): ArtifactService | undefined {
    return this.#ctx.artifacts;
  }

  async #role(): Promise<RoleAnswer> {
    if (!this.#ctx.runtime.actors().includes('cluster')) return { role: 'alone' };
    try {
      return await this.#ctx.runtime.request<RoleAnswer>('cluster', { type: 'role' }, { timeoutMs: 2_000 });
    } catch {
      return { role: 'alone' };
    }
  }

  async node(): Promise<NodeInfo> {
    const { role, leaderId, quorum } = await this.#role();
    const c = this.#ctx;
    return {
      id: c.nodeId,
      name: c.name,
      version: c.version,
      incarnation: c.incarnation,
      uptimeMs: Date.now() - c.startedAt,
      role,
      leaderId,
      cluster: c.config.cluster,
      quorum,
    };
  }

  async #stateAnswer(): Promise<StateAnswer> {
    return this.#ctx.runtime.request<StateAnswer>('topology-keeper', { type: 'state' });
  }

  runnerLog(request: LogRequest, signal: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    const c = this.#ctx;
    return openRunnerLog(
      {
        nodeId: c.nodeId,
        dataDir: c.config.dataDir,
        signPeer: c.signPeer,
        state: async () => (await this.#stateAnswer()).state,
      },
      request,
      signal,
    );
  }

  async state(): Promise<StateView> {
    const answer = await this.#stateAnswer();
    return { state: answer.state, digest: answer.digest, lastIndex: answer.lastIndex };
  }

  async topology(): Promise<TopologyView> {
    const [answer, role] = await Promise.all([this.#stateAnswer(), this.#role()]);
    return topologyView(answer.state, role.leaderId);
  }

  async removeMember(nodeId: string): Promise<MemberRemovalAnswer> {
    if (!this.#ctx.runtime.actors().includes('cluster'))
      throw new TorusError('TORUS_NO_LEADER', 'this node runs without the cluster actor');
    const before = this.#ctx.feed.lastIndex;
    const answer = await this.#ctx.runtime.request<MemberRemovalAnswer>(
      'cluster',
      { type: 'remove-member', nodeId },
      { timeoutMs: COMMAND_TIMEOUT_MS },
    );
    // Written by the leader: answer once this node applied it too, so `status` here no longer lists the member.
    if (answer.status !== 'removed') return answer;
    return this.#untilApplied(
      before,
      (state) => (Object.hasOwn(state.nodes, nodeId) ? undefined : answer),
      `the removal of member ${nodeId}`,
      (event) => event.type === 'NodeGone',
    );
  }

  async peers(): Promise<readonly PeerView[]> {
    if (!this.#ctx.runtime.actors().includes('cluster')) return [];
    const answer = await this.#ctx.runtime.request<{ peers: readonly PeerView[] } | readonly PeerView[]>('cluster', {
      type: 'peers',
    });
    return Array.isArray(answer) ? answer : (answer as { peers: readonly PeerView[] }).peers;
  }

  async previewPlacements(request: unknown): Promise<unknown> {
    const state = await this.#ctx.runtime.request('topology-keeper', { type: 'placementState' });
    return this.#ctx.runtime.request(
      'placement-planner',
      { type: 'preview', state, request },
      { timeoutMs: COMMAND_TIMEOUT_MS },
    );
  }

  async #command(command: Record<string, unknown>): Promise<unknown> {
    if (!this.#ctx.runtime.actors().includes('cluster'))
      throw new TorusError('TORUS_NO_LEADER', 'this node runs without the cluster actor');
    return this.#ctx.runtime.request('cluster', { type: 'command', command }, { timeoutMs: COMMAND_TIMEOUT_MS });
  }

  async createInstance(request: unknown): Promise<InstanceView> {
    const before = this.#ctx.feed.lastIndex;
    const outcome = (await this.#command({ ...(request as Record<string, unknown>), type: 'PlaceInstance' })) as {
      instanceId?: string;
    } | null;
    const id = outcome?.instanceId;
    if (!id)
      throw new TorusError('TORUS_INTERNAL', 'the leader accepted the placement but named no instance', { outcome });
    return this.#untilApplied(before, (state) => instanceView(state, id), `instance ${id}`);
  }

  /**
   * A command is committed on the leader; wait until this node applied it too (`done` reads local state). It
   * follows the applied events after `afterIndex` (taken before the command) and reads the state again only on an
   * instance event or when the state was replaced (a catch-up by snapshot), bounded in time.
   */
  async #untilApplied<T>(
    afterIndex: number,
    done: (state: StateAnswer['state']) => T | undefined,
    what: string,
    relevant: (event: ClusterEvent) => boolean = (event) => event.type.startsWith('Instance'),
  ): Promise<T> {
    return waitForState(this.#ctx.feed, {
      afterIndex,
      relevant,
      check: async () => done((await this.#stateAnswer()).state),
      timeoutMs: 10_000,
      onTimeout: () => new TorusError('TORUS_INTERNAL', `${what} was accepted but has not reached this node yet`),
    });
  }

  async listInstances(): Promise<readonly InstanceView[]> {
    return instanceViews((await this.#stateAnswer()).state);
  }

  async getInstance(id: string): Promise<InstanceView> {
    const view = instanceView((await this.#stateAnswer()).state, id);
    if (!view) throw new TorusError('TORUS_INSTANCE_UNKNOWN', `no instance ${id}`, { id });
    return view;
  }

  async deleteInstance(id: string): Promise<void> {
    await this.getInstance(id);
    const before = this.#ctx.feed.lastIndex;
    await this.#command({ type: 'DeleteInstance', instanceId: id, reason: 'deleted through the API' });
    await this.#untilApplied(
      before,
      (state) => (instanceView(state, id) ? undefined : true),
      `the delete of instance ${id}`,
    );
  }

  events(afterIndex: number, signal: AbortSignal): AsyncIterable<IndexedEvent> {
    return this.#ctx.feed.events(afterIndex, signal);
  }

  async startRingBench(request: unknown, onProgress: (progress: RingBenchProgress) => void): Promise<RingBenchStarted> {
    if (!this.#ctx.ringBench) throw new TorusError('TORUS_INTERNAL', 'ring benchmarks are not available on this node');
    return this.#ctx.ringBench(request, onProgress, this);
  }

  async metrics(): Promise<NodeMetrics> {
    const restarts: Record<string, number> = {};
    for (const [name, stat] of Object.entries(this.#ctx.runtime.stats())) restarts[name] = stat.restarts;
    const own = threadHeap();
    const threadHeapBytes: Record<string, number> = { main: own.usedBytes };
    const threadHeapTotalBytes: Record<string, number> = { main: own.totalBytes };
    const threadHeapLimitBytes: Record<string, number> = { main: own.limitBytes };
    const threadHeapLiveBytes: Record<string, number> = own.liveBytes !== undefined ? { main: own.liveBytes } : {};
    const threadExternalBytes: Record<string, number> = { main: own.externalBytes };
    const threadMallocedBytes: Record<string, number> = { main: own.mallocedBytes };
    const threadIdleCollections: Record<string, number> = { main: own.idleCollections };
    await Promise.all(
      // One sample per thread (an actor answering at two addresses is one thread).
      Object.keys(this.#ctx.runtime.stats()).map(async (name) => {
        try {
          const heap = await this.#ctx.runtime.request<Partial<ReturnType<typeof threadHeap>>>(
            name,
            { type: 'heap' },
            { timeoutMs: 1000 },
          );
          if (typeof heap?.usedBytes === 'number') threadHeapBytes[name] = heap.usedBytes;
          if (typeof heap?.totalBytes === 'number') threadHeapTotalBytes[name] = heap.totalBytes;
          if (typeof heap?.limitBytes === 'number') threadHeapLimitBytes[name] = heap.limitBytes;
          if (typeof heap?.liveBytes === 'number') threadHeapLiveBytes[name] = heap.liveBytes;
          if (typeof heap?.externalBytes === 'number') threadExternalBytes[name] = heap.externalBytes;
          if (typeof heap?.mallocedBytes === 'number') threadMallocedBytes[name] = heap.mallocedBytes;
          if (typeof heap?.idleCollections === 'number') threadIdleCollections[name] = heap.idleCollections;
        } catch {
          /* busy or restarting: left out of this sample */
        }
      }),
    );
    return {
      restarts,
      threadHeapBytes,
      threadHeapTotalBytes,
      threadHeapLimitBytes,
      threadHeapLiveBytes,
      threadExternalBytes,
      threadMallocedBytes,
      threadIdleCollections,
    };
  }

  /** POST /v1/bench/pipeline (src/bench/live/pipeline-bench-live.ts). */
  async benchPipeline(request: unknown): Promise<PipelineBenchResult> {
    return runLivePipelineBench(this.#ctx.runtime, this.#ctx.feed, request as PipelineBenchRequest);
  }

  /** POST /v1/device/measure: the network profiler measures this node's device again (its `measureDevice` request). */
  async measureDevice(): Promise<DeviceMeasuredAnswer> {
    if (!this.#ctx.runtime.actors().includes('network-profiler'))
      throw new TorusError('TORUS_ACTOR_STOPPED', 'this node runs no network profiler');
    return this.#ctx.runtime.request<DeviceMeasuredAnswer>(
      'network-profiler',
      { type: 'measureDevice' },
      { timeoutMs: 30_000 },
    );
  }

  /** POST /v1/links/measure: the network profiler queues the matching links (its `measure` request). */
  async measureLinks(request: {
    readonly peer?: string | undefined;
    readonly ip?: string | undefined;
  }): Promise<MeasureLinksAnswer> {
    if (!this.#ctx.runtime.actors().includes('network-profiler'))
      throw new TorusError('TORUS_ACTOR_STOPPED', 'this node runs no network profiler');
    return this.#ctx.runtime.request<MeasureLinksAnswer>('network-profiler', {
      type: 'measure',
      ...(request.peer !== undefined ? { sink: request.peer } : {}),
      ...(request.ip !== undefined ? { ip: request.ip } : {}),
    });
  }
}
