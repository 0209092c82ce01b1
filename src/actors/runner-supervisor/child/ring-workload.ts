/**
 * `ring` workload on the ring engine (src/ring): Connecting dials both neighbours at the planned addresses
 * (RingCommunicator.connect), Loading reports the shard, WarmingUp is a barrier (every rank must take part,
 * which is why rank 0 warms up last), and tasks run collectives on integer-valued data, check every element
 * against the exact expected value and report timings in the nccl-tests terms (time, algbw, busbw, #wrong).
 *
 * Task ops and params: `barrier`; `all-reduce` {count, dtype: float32|int32|float16, op: sum|max|min, iters,
 * warmup}; `all-gather` {count, dtype, iters, warmup}; `broadcast` {…, root}; `send-recv` {count, dtype, iters, warmup};
 * every collective also takes `bidirectional` (true | false | 'auto', for that task only); `pipeline`
 * {bytesPerLayer, flopsPerTokenPerLayer, activationBytesPerToken, tokensPerStep, steps, warmup}: a pipeline step
 * through the ranks in ring order, each a stage of its planned layers (src/ring/timed-pipeline.ts).
 * A cancelled collective cannot be stopped half-way: the communicator is closed (the op fails on every rank)
 * and the runner reports itself Failed, so it is restarted (with its siblings) and the ring set up again;
 * the same happens when the ring breaks (a peer lost mid-collective).
 */
import { TorusError } from '../../../protocols/errors.js';
import { parseHostPort } from '../../../protocols/hostfile.js';
import type { RunnerStartConfig } from '../../../protocols/runner.js';
import { RingCommunicator } from '../../../ring/index.js';
import { timedCollective } from '../../../ring/timed-collective.js';
import { timedPipeline } from '../../../ring/timed-pipeline.js';
import { abortPromise, type RunnerWorkload } from './workload.js';

/** Peers' runner processes may still be starting: be patient at set-up, bounded all the same. */
const CONNECT_TIMEOUT_MS = 120_000;
const MAX_COUNT = 64 * 1024 * 1024;

function ringIdOf(instanceId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < instanceId.length; i++) h = Math.imul(h ^ instanceId.charCodeAt(i), 0x01000193) >>> 0;
  return h & 0x7fffffff;
}

function intParam(
  params: Readonly<Record<string, unknown>>,
  key: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const v = params[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new TorusError('TORUS_API_VALIDATION', `ring task: ${key} must be an integer in [${min}, ${max}]`, { key });
  }
  return v;
}

export function ringWorkload(config: RunnerStartConfig, _diagnostic: (message: string) => void): RunnerWorkload {
  const { rank, worldSize: n } = config;
  let comm: RingCommunicator | undefined;
  let closed = false;

  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await comm?.close();
  };
  const need = (): RingCommunicator => {
    if (!comm || closed)
      throw new TorusError('TORUS_RING_PEER_LOST', 'ring is not connected (closed or never connected)');
    return comm;
  };

  async function collective(
    op: string,
    params: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<unknown> {
    const c = need();
    if (op === 'barrier') {
      const t0 = performance.now();
      await Promise.race([c.barrier(), abortPromise(signal)]);
      return { op, worldSize: n, timeUs: Math.round((performance.now() - t0) * 1000) };
    }
    if (op === 'pipeline') {
      // This rank's stage holds its planned layers (the shard's range); sizes come with the task.
      return timedPipeline(
        c,
        {
          layers: config.layerEnd - config.layerStart,
          bytesPerLayer: intParam(params, 'bytesPerLayer', 1 << 20, 1, 2 ** 31),
          flopsPerTokenPerLayer: intParam(params, 'flopsPerTokenPerLayer', 2 << 20, 0, 2 ** 40),
          activationBytesPerToken: intParam(params, 'activationBytesPerToken', 8192, 1, 2 ** 28),
          tokensPerStep: intParam(params, 'tokensPerStep', 1, 1, 65_536),
          steps: intParam(params, 'steps', 10, 1, 10_000),
          warmup: intParam(params, 'warmup', 1, 0, 1000),
        },
        signal,
      );
    }
    const count = intParam(params, 'count', 1024, 1, MAX_COUNT);
    const iters = intParam(params, 'iters', 1, 1, 10_000);
    const warmup = intParam(params, 'warmup', 0, 0, 1000);
    const dtype = params.dtype ?? 'float32';
    if (dtype !== 'float32' && dtype !== 'int32' && dtype !== 'float16') {
      throw new TorusError('TORUS_API_VALIDATION', 'ring task: dtype must be float32, int32 or float16');
    }
    const reduce = params.op ?? 'sum';
    if (reduce !== 'sum' && reduce !== 'max' && reduce !== 'min')
      throw new TorusError('TORUS_API_VALIDATION', 'ring task: op must be sum, max or min');
    const root = intParam(params, 'root', 0, 0, n - 1);
    const bidirectional = params.bidirectional;
    if (bidirectional !== undefined && bidirectional !== true && bidirectional !== false && bidirectional !== 'auto') {
      throw new TorusError('TORUS_API_VALIDATION', "ring task: bidirectional must be true, false or 'auto'");
    }
    if (op !== 'all-reduce' && op !== 'all-gather' && op !== 'broadcast' && op !== 'send-recv')
      throw new TorusError('TORUS_API_VALIDATION', `ring task: unknown op ${op}`);
    // nccl-tests timing (barrier, warm-up, timed loop; fill and check outside it): src/ring/timed-collective.ts
    return timedCollective(
      c,
      { op, count, dtype, reduce, root, iters, warmup, ...(bidirectional !== undefined ? { bidirectional } : {}) },
      signal,
    );
  }

  let tasks: Promise<void> = Promise.resolve();
  return {
    async connect(signal) {
      const hosts = config.hosts.map((h, i) => parseHostPort(h, `hosts[${i}]`));
      const connecting = RingCommunicator.connect({
        rank,
        hosts,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        ringId: ringIdOf(config.instanceId),
        key: config.ringKey ?? null,
      });
      try {
        comm = await Promise.race([connecting, abortPromise(signal)]);
      } catch (err) {
        void connecting.then(
          (c) => c.close(),
          () => {},
        );
        throw err;
      }
    },
    async load(report) {
      report(config.layerEnd - config.layerStart);
    },
    async warmup(signal) {
      await Promise.race([need().barrier(), abortPromise(signal)]);
    },
    run(op, params, signal) {
      // One task at a time, in arrival order: every rank gets the tasks in the same order, so running them one
      // after another keeps the ranks' collectives in step. (Concurrent tasks interleaved their collectives
      // differently on each rank as soon as a task awaited anything but a collective: "collective mismatch".)
      const turn = tasks.then(async () => {
        signal.throwIfAborted();
        const onAbort = (): void => void close();
        signal.addEventListener('abort', onAbort, { once: true });
        try {
          return await collective(op, params, signal);
        } finally {
          signal.removeEventListener('abort', onAbort);
        }
      });
      tasks = turn.then(
        () => undefined,
        () => undefined,
      );
      return turn;
    },
    close,
    broken() {
      if (comm?.error) return `ring broken: ${comm.error.message}`;
      if (closed && comm) return 'ring closed (a cancelled collective cannot stop half-way)';
      return undefined;
    },
  };
}
