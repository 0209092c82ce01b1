import { randomUUID } from 'node:crypto';
import { TorusError, asTorusError, type ErrorJson } from '../../protocols/errors.js';
import type { RingBenchProgress, RingBenchResult } from '../node-facade.js';
import { requestCodecs } from '../request-schemas.js';
import type { Route, RouteShared } from '../router.js';

/** What GET /v1/bench/ring/:id returns, and what each `bench` SSE notice carries. */
export interface BenchRun {
  readonly id: string;
  status: 'running' | 'done' | 'failed';
  startedAt: number;
  progress?: RingBenchProgress;
  result?: RingBenchResult;
  error?: ErrorJson;
}

const KEEP_RUNS = 20; // finished runs kept for late readers; older ones are dropped

/**
 * A benchmark takes minutes, so POST answers 202 at once with the run id; progress and the final table go to
 * every /v1/events client as `bench` notices, and GET /v1/bench/ring/:id reads the run at any time.
 */
export const benchRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/v1/bench/pipeline',
    summary: 'place a workload, time a pipeline step through it: measured beside predicted (200)',
    writeRate: true,
    handler: async ({ facade, body, shared }) => {
      // Every rule of the body is in its schema, the one the document serves (../request-schemas.ts).
      const request = requestCodecs.pipelineBench.decode(await body());
      if (!facade.benchPipeline)
        throw new TorusError('TORUS_INTERNAL', 'pipeline benchmarks are not available on this node');
      const result = await facade.benchPipeline(request);
      // The dashboard shows the measured figure beside the option it ran on.
      for (const notice of shared.broadcast) notice('bench-pipeline', result);
      return { status: 200, body: result };
    },
  },
  {
    method: 'POST',
    path: '/v1/bench/ring',
    summary: 'start a ring benchmark over chosen nodes (202 + run id; progress as `bench` SSE notices)',
    writeRate: true,
    handler: async ({ facade, body, shared }) => {
      const request = requestCodecs.ringBench.decode(await body());
      const run: BenchRun = { id: randomUUID(), status: 'running', startedAt: Date.now() };
      const publish = (): void => {
        for (const notice of shared.broadcast) notice('bench', run);
      };
      const started = await facade.startRingBench(request, (progress) => {
        run.progress = progress;
        publish();
      });
      remember(shared, run);
      publish();
      started.result.then(
        (result) => {
          run.status = 'done';
          run.result = result;
          publish();
        },
        (error: unknown) => {
          run.status = 'failed';
          run.error = asTorusError(error).toJSON();
          publish();
        },
      );
      return { status: 202, body: run, headers: { location: `/v1/bench/ring/${run.id}` } };
    },
  },
  {
    method: 'GET',
    path: '/v1/bench/ring',
    summary: 'the recent benchmark runs of this node (the last 20), newest first',
    handler: async ({ shared }) => ({ status: 200, body: { runs: [...shared.benches.values()].reverse() } }),
  },
  {
    method: 'GET',
    path: '/v1/bench/ring/:id',
    summary: 'a ring benchmark run: status, last progress, result table or error',
    handler: async ({ params, shared }) => {
      const run = shared.benches.get(params.id ?? '');
      if (!run)
        throw new TorusError('TORUS_API_NOT_FOUND', `no benchmark run ${params.id}`, { where: 'params', path: 'id' });
      return { status: 200, body: run };
    },
  },
];

function remember(shared: RouteShared, run: BenchRun): void {
  shared.benches.set(run.id, run);
  for (const id of shared.benches.keys()) {
    if (shared.benches.size <= KEEP_RUNS) break;
    shared.benches.delete(id);
  }
}
