/**
 * The ring benchmark on a live cluster (POST /v1/bench/ring, `bench ring --live`): places a `ring` instance over
 * the chosen nodes through the leader, waits for every runner to be Ready, submits one collective task per
 * (op, size) as cluster tasks, and collects rank 0's nccl-tests numbers into a table. Each task is timed as
 * nccl-tests does (src/ring/timed-collective.ts: warm-up, barrier, a timed loop with no data preparation in
 * it; mean, median and p99 per op); the request's `bidirectional` reaches every rank with the task. The instance is deleted at
 * the end, whatever happened. With `gloo: true`, torch Gloo's all_reduce then runs on the same nodes
 * (gloo-bench-live.ts; refused up front where a node's --allow-exec does not admit the interpreter).
 */
import type { EventFeed } from '../../api/event-feed.js';
import type { RingBenchProgress, RingBenchStarted } from '../../api/node-facade.js';
import { compareWithGloo, DEFAULT_GLOO_PYTHON, glooOnNodes, glooRefusal, type GlooFacade } from './gloo-bench-live.js';
import { TorusError } from '../../protocols/errors.js';
import type { ClusterState, InstanceRecord, TaskRecord } from '../../actors/topology-keeper/state.js';
import type { ClusterEvent } from '../../protocols/events.js';
import type { Runtime } from '../../runtime/runtime.js';
import { waitForState } from '../../api/wait-for-state.js';

type Op = 'all-reduce' | 'all-gather' | 'broadcast' | 'send-recv';
type Dtype = 'float32' | 'float16' | 'int32';

export interface LiveBenchRequest {
  readonly nodes?: readonly string[];
  readonly ops?: readonly Op[];
  readonly dtype?: Dtype;
  readonly minBytes?: number;
  readonly maxBytes?: number;
  readonly stepFactor?: number;
  readonly iterations?: number;
  readonly warmup?: number;
  /** both ring directions (true), one (false); absent: the communicator's choice from the interfaces (directions.ts) */
  readonly bidirectional?: boolean;
  /** after the ring, torch Gloo's all_reduce on the same nodes as an exec job (gloo-bench-live.ts) */
  readonly gloo?: boolean;
  /** the interpreter of the Gloo job (absolute path; default /usr/bin/python3) */
  readonly glooPython?: string;
}

export interface LiveBenchRow {
  readonly op: Op;
  readonly size: number;
  readonly count: number;
  readonly type: Dtype;
  readonly redop: string;
  readonly timeUs: number;
  readonly algbw: number;
  readonly busbw: number;
  /** rank 0's per-op median and 99th percentile of the timed loop (timeUs is the loop's mean, nccl-tests) */
  readonly medianUs: number;
  readonly p99Us: number;
  /** busbw at the median op time */
  readonly busbwMedian: number;
  readonly wrong: number;
  /** both ring directions were used */
  readonly bidirectional: boolean;
}

const READY_TIMEOUT_MS = 60_000;
const GLOO_TIMEOUT_MS = 600_000;
const TASK_TIMEOUT_MS = 120_000;

/** nccl-tests style sizes: minBytes, ×stepFactor, up to maxBytes, rounded to whole elements (at least one per rank). */
export function benchSizes(
  minBytes: number,
  maxBytes: number,
  stepFactor: number,
  elementBytes: number,
  ranks: number,
): number[] {
  const sizes: number[] = [];
  for (let size = minBytes; size <= maxBytes; size *= stepFactor) {
    const count = Math.max(ranks, Math.floor(size / elementBytes));
    if (!sizes.includes(count)) sizes.push(count);
    if (stepFactor < 2) break;
  }
  return sizes;
}

export async function state(runtime: Runtime): Promise<ClusterState> {
  return (await runtime.request<{ state: ClusterState }>('topology-keeper', { type: 'state' })).state;
}

export async function command(runtime: Runtime, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  // The cluster answers with the handler's outcome (see CommandHandler).
  return (
    (await runtime.request<Record<string, unknown> | null>(
      'cluster',
      { type: 'command', command: body },
      { timeoutMs: 60_000 },
    )) ?? {}
  );
}

/** The instance's record (one keeper request, not the whole state). */
export async function instanceRecord(runtime: Runtime, instanceId: string): Promise<InstanceRecord> {
  try {
    return await runtime.request<InstanceRecord>('topology-keeper', { type: 'instance', id: instanceId });
  } catch (error) {
    if (error instanceof TorusError && error.code === 'TORUS_INSTANCE_UNKNOWN')
      throw new TorusError('TORUS_INSTANCE_UNKNOWN', `bench instance ${instanceId} disappeared`);
    throw error;
  }
}

/** undefined while runners are still coming up; throws when the instance or a runner failed. */
function readiness(instance: InstanceRecord): true | undefined {
  if (instance.status === 'failed')
    throw new TorusError('TORUS_RUNNER_FAILED', `bench instance failed: ${instance.reason ?? 'unknown reason'}`);
  const failed = instance.plan.nodes.find((node) => instance.runners[node]?.status === 'Failed');
  if (failed)
    throw new TorusError(
      'TORUS_RUNNER_FAILED',
      `ring runner on ${failed} failed: ${instance.runners[failed]?.reason ?? ''}`,
    );
  return instance.plan.nodes.every((node) => instance.runners[node]?.status === 'Ready') ? true : undefined;
}

const TERMINAL = new Set(['complete', 'failed', 'cancelled', 'timed_out']);

/** A finished task's result; throws for a task that ended otherwise. */
function taskOutcome(
  kind: Op | 'pipeline',
  taskId: string,
  task: Pick<TaskRecord, 'status' | 'result' | 'error'>,
): Record<string, unknown> {
  if (task.status === 'complete') return (task.result ?? {}) as Record<string, unknown>;
  throw new TorusError('TORUS_RUNNER_FAILED', `${kind} task ${task.status}: ${task.error ?? ''}`, { taskId });
}

const aboutInstance =
  (instanceId: string) =>
  (e: ClusterEvent): boolean =>
    (e.type === 'RunnerStatusChanged' && e.instanceId === instanceId) ||
    ((e.type === 'InstanceFailed' || e.type === 'InstanceDeleted' || e.type === 'InstanceNeedsReplacement') &&
      e.instanceId === instanceId) ||
    (e.type === 'InstanceReplaced' && e.instance.id === instanceId);

/**
 * The leader answers a command once it is committed; this node applies it when it learns the commit index (the next
 * append or heartbeat). Until then the instance is unknown here, which is not "it disappeared".
 */
async function untilKnownHere(runtime: Runtime, instanceId: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      await instanceRecord(runtime, instanceId);
      return;
    } catch (error) {
      if (!(error instanceof TorusError && error.code === 'TORUS_INSTANCE_UNKNOWN') || Date.now() > end) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function waitReady(
  runtime: Runtime,
  feed: EventFeed,
  instanceId: string,
  afterIndex: number,
): Promise<void> {
  await untilKnownHere(runtime, instanceId);
  await waitForState(feed, {
    afterIndex,
    relevant: aboutInstance(instanceId),
    check: async () => readiness(await instanceRecord(runtime, instanceId)),
    timeoutMs: READY_TIMEOUT_MS,
    onTimeout: () => new TorusError('TORUS_RING_TIMEOUT', `ring runners not ready after ${READY_TIMEOUT_MS} ms`),
  });
}

export async function runTask(
  runtime: Runtime,
  feed: EventFeed,
  instanceId: string,
  kind: Op | 'pipeline',
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const afterIndex = feed.lastIndex;
  const { taskId } = await command(runtime, {
    type: 'SubmitTask',
    instanceId,
    kind,
    params,
    timeoutMs: TASK_TIMEOUT_MS,
  });
  if (typeof taskId !== 'string')
    throw new TorusError('TORUS_INTERNAL', 'the leader accepted the task but named no task id');
  return waitForState(feed, {
    afterIndex,
    relevant: (e) => e.type === 'TaskStatusChanged' && e.taskId === taskId && TERMINAL.has(e.status),
    // The event carries the result: no keeper request per task.
    fromEvent: (e) => (e.type === 'TaskStatusChanged' ? taskOutcome(kind, taskId, e) : undefined),
    check: async () => {
      const task = (await state(runtime)).tasks[taskId];
      return task && TERMINAL.has(task.status) ? taskOutcome(kind, taskId, task) : undefined;
    },
    timeoutMs: TASK_TIMEOUT_MS + 5_000,
    onTimeout: () => new TorusError('TORUS_RING_TIMEOUT', `${kind} task did not finish in time`, { taskId }),
  });
}

export async function startLiveRingBench(
  runtime: Runtime,
  feed: EventFeed,
  raw: unknown,
  onProgress: (p: RingBenchProgress) => void,
  facade?: GlooFacade,
): Promise<RingBenchStarted> {
  const request = (raw ?? {}) as LiveBenchRequest;
  const current = await state(runtime);
  const nodes = request.nodes ?? Object.keys(current.nodes).sort();
  const unknown = nodes.filter((n) => !Object.hasOwn(current.nodes, n));
  if (unknown.length)
    throw new TorusError('TORUS_NODE_UNKNOWN', `not cluster members: ${unknown.join(', ')}`, { unknown });
  if (nodes.length === 0) throw new TorusError('TORUS_NODE_UNKNOWN', 'the cluster has no nodes to benchmark');
  const dtype = request.dtype ?? 'float32';
  const elementBytes = dtype === 'float16' ? 2 : 4;
  const ops = request.ops ?? ['all-reduce'];
  const counts = benchSizes(
    request.minBytes ?? 8,
    request.maxBytes ?? 64 * 1024 * 1024,
    request.stepFactor ?? 2,
    elementBytes,
    nodes.length,
  );
  const python = request.glooPython ?? DEFAULT_GLOO_PYTHON;
  if (request.gloo) {
    if (!facade) throw new TorusError('TORUS_INTERNAL', 'the Gloo comparison is not available on this node');
    glooRefusal(current, nodes, python); // a node's --allow-exec refuses it: 409 before anything runs
  }
  const total = ops.length * counts.length + (request.gloo ? 1 : 0);

  // Placing and waiting happen before we answer "running", so a refusal reaches the caller as an error.
  const beforePlace = feed.lastIndex;
  const placed = await command(runtime, {
    type: 'PlaceInstance',
    workload: { kind: 'ring', id: 'ring-bench', memoryBytes: 0, layers: Math.max(1, nodes.length) },
    requiredNodes: nodes,
    minNodes: nodes.length,
    sharding: 'pipeline',
    backend: 'ring',
  });
  const instanceId = placed.instanceId;
  if (typeof instanceId !== 'string')
    throw new TorusError('TORUS_INTERNAL', 'the leader placed the bench ring but named no instance');
  let deleted: Promise<unknown> | undefined;
  const cleanup = (): Promise<unknown> =>
    (deleted ??= command(runtime, { type: 'DeleteInstance', instanceId, reason: 'ring benchmark finished' }).catch(
      () => undefined,
    ));

  const result = (async () => {
    try {
      onProgress({ done: 0, total, message: `waiting for ${nodes.length} ring runners` });
      await waitReady(runtime, feed, instanceId, beforePlace);
      const ring = (await instanceRecord(runtime, instanceId)).plan.nodes;
      const rows: LiveBenchRow[] = [];
      for (const op of ops) {
        for (const count of counts) {
          const r = await runTask(runtime, feed, instanceId, op, {
            count,
            dtype,
            op: 'sum',
            iters: request.iterations ?? 5,
            warmup: request.warmup ?? 1,
            ...(request.bidirectional !== undefined ? { bidirectional: request.bidirectional } : {}),
          });
          const row: LiveBenchRow = {
            op,
            size: Number(r.bytes ?? count * elementBytes),
            count,
            type: dtype,
            redop: op === 'all-reduce' ? 'sum' : 'none',
            timeUs: Number(r.timeUs ?? 0),
            algbw: Number(r.algbw ?? 0),
            busbw: Number(r.busbw ?? 0),
            medianUs: Number(r.medianUs ?? 0),
            p99Us: Number(r.p99Us ?? 0),
            busbwMedian: Number(r.busbwMedian ?? 0),
            wrong: Number(r.wrong ?? 0),
            bidirectional: r.bidirectional === true,
          };
          rows.push(row);
          onProgress({ done: rows.length, total, message: `${op} ${row.size} B`, row });
        }
      }
      const large = rows.filter((r) => r.size >= 8 * 1024 * 1024);
      const avg = (xs: LiveBenchRow[]): number => (xs.length ? xs.reduce((s, r) => s + r.busbw, 0) / xs.length : 0);
      const table = {
        mode: 'live',
        ring,
        instanceId,
        rows,
        avgBusbw: avg(rows),
        avgBusbwLarge: large.length ? avg(large) : null,
      };
      if (!request.gloo || !facade) return table;
      // The ring's runners go first: Gloo gets the same nodes and links to itself.
      await cleanup();
      const sizes = [...new Set(rows.filter((r) => r.op === 'all-reduce').map((r) => r.size))];
      onProgress({ done: rows.length, total, message: `torch Gloo all_reduce on the same ${ring.length} nodes` });
      const gloo =
        sizes.length === 0
          ? { ok: false as const, reason: 'torch Gloo comparison skipped: the run has no all-reduce sizes' }
          : await glooOnNodes(facade, {
              nodes: ring,
              sizes,
              warmup: request.warmup ?? 1,
              iters: request.iterations ?? 5,
              python,
              timeoutMs: GLOO_TIMEOUT_MS,
            });
      onProgress({ done: total, total, message: gloo.ok ? 'torch Gloo done' : gloo.reason });
      return { ...table, gloo, vsGloo: compareWithGloo(rows, gloo) };
    } finally {
      await cleanup();
    }
  })();
  result.catch(() => undefined); // the API observes it; never an unhandled rejection here
  return { result };
}
