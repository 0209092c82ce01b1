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
  PeerView,
  RingBenchProgress,
  RingBenchStarted,
  StateView,
  TopologyView,
} from '../api/node-facade.js';
import { instanceView, instanceViews, topologyView } from '../api/views.js';
import type { ClusterEvent, IndexedEvent } from '../protocols/events.js';
import type { CalibrationRecorded } from '../protocols/calibration.js';
import type { Runtime } from '../runtime/runtime.js';
import { watchLiveHeap } from '../runtime/thread-heap.js';
import type { Logger } from '../runtime/log.js';
import type { NodeConfig } from './config.js';
import type { ArtifactService } from '../artifacts/service.js';
import type { PeerSigner } from '../protocols/peer-http-proof.js';
import { openRunnerLog, type LogRequest } from '../actors/runner-supervisor/main/runner-logs.js';
import { ClusterRole } from './cluster-role.js';
import { ThreadSamples } from './thread-samples.js';

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
  /** Where the facade says what went wrong that its answers cannot (the cluster actor not answering). */
  readonly log?: Logger;
}

const COMMAND_TIMEOUT_MS = 30_000;

export class ActorNodeFacade implements NodeFacade {
  readonly #ctx: FacadeContext;
  readonly #role: ClusterRole;
  readonly #threads: ThreadSamples;

  constructor(ctx: FacadeContext) {
    this.#ctx = ctx;
    this.#role = new ClusterRole(ctx.runtime, ctx.log);
    this.#threads = new ThreadSamples(ctx.runtime);
    watchLiveHeap(); // the main thread's; each actor's worker watches its own
  }

  get artifacts(): ArtifactService | undefined {
    return this.#ctx.artifacts;
  }

  async node(): Promise<NodeInfo> {
    const { role, leader, quorum, clusterUnavailable } = await this.#role.ask();
    const c = this.#ctx;
    return {
      id: c.nodeId,
      name: c.name,
      version: c.version,
      incarnation: c.incarnation,
      uptimeMs: Date.now() - c.startedAt,
      role,
      leaderId: leader ?? undefined,
      cluster: c.config.cluster,
      quorum,
      ...(clusterUnavailable ? { clusterUnavailable } : {}),
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
    const [answer, role] = await Promise.all([this.#stateAnswer(), this.#role.ask()]);
    return topologyView(answer.state, role.leader ?? undefined);
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
    return {
      restarts,
      ...(await this.#threads.sample()),
      clusterActorUnavailable: this.#role.unavailableCounts(),
      ...(this.#ctx.artifacts ? { damagedArtifacts: this.#ctx.artifacts.damaged().length } : {}),
      ...(await this.#runnerLogDrops()),
    };
  }

  /** Runner output lost to write errors; a supervisor that does not answer is already listed in threadsUnanswered. */
  async #runnerLogDrops(): Promise<Pick<NodeMetrics, 'runnerLogDroppedBytes'>> {
    if (!this.#ctx.runtime.actors().includes('runner-supervisor')) return {};
    try {
      const drops = await this.#ctx.runtime.request<Record<string, number>>(
        'runner-supervisor',
        { type: 'log-drops' },
        { timeoutMs: 1000 },
      );
      return { runnerLogDroppedBytes: drops };
    } catch {
      return {};
    }
  }

  /** POST /v1/bench/pipeline (src/bench/live/pipeline-bench-live.ts). */
  async benchPipeline(request: unknown): Promise<PipelineBenchResult> {
    return runLivePipelineBench(this.#ctx.runtime, this.#ctx.feed, request as PipelineBenchRequest);
  }

  /** POST /v1/calibrations: the leader sequences the figures; answered once this node applied them. */
  async recordCalibration(event: CalibrationRecorded): Promise<void> {
    if (!this.#ctx.runtime.actors().includes('cluster'))
      throw new TorusError('TORUS_NO_LEADER', 'this node runs without the cluster actor');
    const before = this.#ctx.feed.lastIndex;
    await this.#ctx.runtime.request('cluster', { type: 'propose', event }, { timeoutMs: COMMAND_TIMEOUT_MS });
    const recorded = (state: StateAnswer['state']): true | undefined =>
      state.calibrations?.[event.nodeId]?.[event.framework]?.measuredAt === event.measuredAt ? true : undefined;
    await this.#untilApplied(
      before,
      recorded,
      `the calibration of ${event.nodeId}`,
      (e) => e.type === 'CalibrationRecorded',
    );
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
