/**
 * The pipeline benchmark on a live cluster (POST /v1/bench/pipeline): places a `ring` instance for the described
 * workload through the leader (so the planner chooses by prediction, exactly as for a real placement), waits for
 * its runners, runs the `pipeline` task (src/ring/timed-pipeline.ts: each stage streams its layers' weight bytes,
 * runs its FLOPs and passes the activation over the planned address) and answers the measured step time and
 * tokens/s beside the cost model's prediction for the same plan. The instance is deleted at the end, whatever
 * happened.
 */
import type { EventFeed } from '../../api/event-feed.js';
import { indexCluster } from '../../actors/placement-planner/search/cluster-index.js';
import { decodePlacementInput } from '../../actors/placement-planner/search/placement-input.js';
import { predictPipeline, type Prediction } from '../../actors/placement-planner/search/cost-model.js';
import { decodePlacementRequest } from '../../actors/placement-planner/search/placement-request.js';
import { TorusError } from '../../protocols/errors.js';
import type { Runtime } from '../../runtime/runtime.js';
import { command, instanceRecord, runTask, waitReady } from './ring-bench-live.js';

export interface PipelineBenchRequest {
  readonly workload: Readonly<Record<string, unknown>> & { readonly id: string; readonly layers: number };
  readonly objective?: 'latency' | 'throughput';
  readonly minNodes?: number;
  readonly requiredNodes?: readonly string[];
  /** Run on exactly this option: these nodes, in this ring (rank) order; the planner does not choose. */
  readonly nodes?: readonly string[];
  readonly steps?: number;
  readonly warmup?: number;
}

export interface PipelineBenchResult {
  readonly instanceId: string;
  /** ring order (rank order) */
  readonly nodes: readonly string[];
  readonly layers: readonly number[];
  /** per rank, the address it dials its right neighbour at (the plan's ring hostfile) */
  readonly nextHop: readonly string[];
  readonly predicted: Prediction;
  readonly measured: {
    readonly stepMs: number | null;
    readonly tokensPerS: number | null;
    readonly activationBytes: number;
    readonly verifiedBytes: number;
    readonly wrong: number;
  };
  /** (measured − predicted) / predicted step time, percent; null without a complete prediction */
  readonly errorPercent: number | null;
}

export async function runLivePipelineBench(
  runtime: Runtime,
  feed: EventFeed,
  request: PipelineBenchRequest,
): Promise<PipelineBenchResult> {
  const placement = {
    workload: { ...request.workload },
    sharding: 'pipeline',
    backend: 'ring',
    ...(request.objective ? { objective: request.objective } : {}),
    ...(request.minNodes !== undefined ? { minNodes: request.minNodes } : {}),
    ...(request.requiredNodes ? { requiredNodes: request.requiredNodes } : {}),
  };
  // The planner's defaults (bytes per layer, FLOPs, activation), so the runners do what was predicted.
  const w = decodePlacementRequest(placement, 'body', 'request').workload;
  // The request's schema requires hiddenSize or activationBytesPerToken (src/api/request-schemas.ts).
  if (w.activationBytesPerToken === undefined)
    throw new TorusError('TORUS_INTERNAL', 'pipeline bench: a request without an activation size got past its schema');
  const before = feed.lastIndex;
  // A pinned option (`nodes`) is placed as any pinned instance: the leader's planner checks that set in that order.
  const placed = await command(runtime, {
    type: 'PlaceInstance',
    workload: { kind: 'ring', ...request.workload },
    sharding: 'pipeline',
    backend: 'ring',
    ...(request.objective ? { objective: request.objective } : {}),
    ...(request.minNodes !== undefined ? { minNodes: request.minNodes } : {}),
    ...(request.requiredNodes ? { requiredNodes: request.requiredNodes } : {}),
    ...(request.nodes ? { nodes: request.nodes } : {}),
  });
  const instanceId = placed.instanceId;
  if (typeof instanceId !== 'string')
    throw new TorusError('TORUS_INTERNAL', 'the leader placed the pipeline bench but named no instance');
  try {
    await waitReady(runtime, feed, instanceId, before);
    const plan = (await instanceRecord(runtime, instanceId)).plan;
    const live = await runtime.request('topology-keeper', { type: 'placementState' }, { timeoutMs: 5_000 });
    const index = indexCluster(decodePlacementInput(live), 'ring');
    const order = plan.nodes.map((id) => index.indexOf.get(id) as number);
    const layers = plan.shards.map((s) => s.endLayer - s.startLayer);
    const objective = request.objective ?? 'latency';
    const predicted = predictPipeline(index, order, layers, w, objective);
    const r = await runTask(runtime, feed, instanceId, 'pipeline', {
      bytesPerLayer: w.bytesPerLayer,
      flopsPerTokenPerLayer: Math.round(w.flopsPerTokenPerLayer),
      activationBytesPerToken: w.activationBytesPerToken,
      tokensPerStep: w.tokensPerStep,
      steps: request.steps ?? 10,
      warmup: request.warmup ?? 2,
    });
    const stepMs = typeof r.stepMs === 'number' ? r.stepMs : null;
    return {
      instanceId,
      nodes: plan.nodes,
      layers,
      nextHop: plan.nodes.map((node, rank) => {
        const next = (rank + 1) % plan.nodes.length;
        return plan.hostsByNode?.[node]?.[next]?.ip ?? '';
      }),
      predicted,
      measured: {
        stepMs,
        tokensPerS: typeof r.tokensPerS === 'number' ? r.tokensPerS : null,
        activationBytes: Number(r.activationBytes ?? 0),
        verifiedBytes: Number(r.verifiedBytes ?? 0),
        wrong: Number(r.wrong ?? 0),
      },
      errorPercent:
        stepMs !== null && predicted.stepMs !== null && predicted.stepMs > 0
          ? Math.round(((stepMs - predicted.stepMs) / predicted.stepMs) * 1e4) / 100
          : null,
    };
  } finally {
    await command(runtime, { type: 'DeleteInstance', instanceId, reason: 'pipeline benchmark finished' }).catch(
      () => undefined,
    );
  }
}
