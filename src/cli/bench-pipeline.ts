/** `torus bench pipeline`: places a described workload on the cluster and times a pipeline step (POST /v1/bench/pipeline). */
import type { PipelineBenchResult } from '../bench/live/pipeline-bench-live.js';
import { UsageError, parseCli, printJson, processIo, runCli, type CliIo } from './api-client.js';

export const BENCH_PIPELINE_USAGE = `usage: torus bench pipeline --memory BYTES --layers N --hidden-size H [--tokens N] [--objective latency|throughput]
                           [--steps N] [--nodes A,B,C] [--api URL] [--token T | --data-dir DIR] [--json]
  Places a workload of that size (the planner chooses by predicted speed; --nodes: exactly those nodes in that
  ring order, the planner only splits the layers and picks the addresses), runs a pipeline step through its
  stages (each streams its layers' weights and runs their FLOPs, the activation crosses the planned addresses)
  and prints the measured step time and tokens/s beside the prediction.
`;

const count = (v: unknown, flag: string): number | undefined => {
  if (v === undefined) return undefined;
  const x = Number(v);
  if (!Number.isInteger(x) || x < 1) throw new UsageError(`${flag} must be a positive integer`);
  return x;
};

export async function runBenchPipelineCommand(args: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, BENCH_PIPELINE_USAGE, args, args.includes('--json'), async () => {
    const { values, client } = parseCli(args, {
      memory: { type: 'string' },
      layers: { type: 'string' },
      'hidden-size': { type: 'string' },
      tokens: { type: 'string' },
      objective: { type: 'string' },
      steps: { type: 'string' },
      nodes: { type: 'string' },
    });
    const memoryBytes = count(values.memory, '--memory');
    const layers = count(values.layers, '--layers');
    if (memoryBytes === undefined || layers === undefined) throw new UsageError('--memory and --layers are required');
    const hiddenSize = count(values['hidden-size'], '--hidden-size');
    const tokensPerStep = count(values.tokens, '--tokens');
    const steps = count(values.steps, '--steps');
    const body = {
      workload: {
        id: 'pipeline-bench',
        memoryBytes,
        layers,
        ...(hiddenSize !== undefined ? { hiddenSize } : {}),
        ...(tokensPerStep !== undefined ? { tokensPerStep } : {}),
      },
      ...(typeof values.objective === 'string' ? { objective: values.objective } : {}),
      ...(steps !== undefined ? { steps } : {}),
      ...(typeof values.nodes === 'string' ? { nodes: values.nodes.split(',').filter(Boolean) } : {}),
    };
    const r = await client.request<PipelineBenchResult>('POST', '/v1/bench/pipeline', body);
    if (values.json) printJson(io, r);
    else {
      const fmt = (x: number | null, unit: string): string => (x === null ? '?' : `${x} ${unit}`);
      io.stdout.write(`pipeline over ${r.nodes.join(' → ')} (layers ${r.layers.join('/')})\n`);
      io.stdout.write(
        `measured:  ${fmt(r.measured.stepMs, 'ms')} per step, ${fmt(r.measured.tokensPerS, 'tokens/s')} (activations verified: ${r.measured.verifiedBytes} B, ${r.measured.wrong} wrong)\n`,
      );
      io.stdout.write(
        `predicted: ${fmt(r.predicted.stepMs, 'ms')} per step, ${fmt(r.predicted.tokensPerS, 'tokens/s')}${r.errorPercent === null ? '' : ` (error ${r.errorPercent} %)`}\n`,
      );
      if (r.predicted.unmeasured.length > 0) io.stdout.write(`unmeasured: ${r.predicted.unmeasured.join(', ')}\n`);
    }
    return r.measured.wrong === 0 ? 0 : 1;
  });
}
