/**
 * `torus calibrate --framework NAME [--nodes ID,ID] -- CMD ARGS…`: runs a framework's calibration command on each
 * node (POST /v1/calibrations) and prints what each recorded, or why it recorded nothing (docs/placement.md,
 * "Calibrated figures"). Without a command it lists the figures the cluster holds (GET /v1/calibrations).
 */
import type { Shape } from '../protocols/schema-kit.js';
import type { responseSchemas } from '../api/response-schemas.js';
import { nodeList } from './place.js';
import { parseCli, printJson, processIo, runCli, UsageError, type CliIo } from './api-client.js';

export const CALIBRATE_USAGE = `usage: torus calibrate --framework NAME [--nodes ID,ID] [--timeout-ms MS] -- CMD [ARGS...]
       torus calibrate [--json]            (lists the figures the cluster holds)
  Runs CMD on each node (default: every node) as a one-rank exec job (the node's --allow-exec must allow it).
  CMD prints one line {"torusCalibration":1,"framework":NAME,"gflops":..,"memoryBandwidthGBps":..,"layerOverheadMs":..}
  (optionally also "hopOverheadMs":.., the framework's cost of one pipeline hop, the link aside);
  torus checks it strictly and records it for that node and framework: a workload naming the framework is then
  predicted with those figures on that node. Example (torch, ~5 s a node):
    torus calibrate --framework torch -- /usr/bin/python3 benchmarks/model-placement/calibrate_torch.py
  Exits 1 when any node recorded nothing.
`;

type Run = Shape<(typeof responseSchemas)['CalibrationRun']>;
type Held = Shape<(typeof responseSchemas)['Calibrations']>;

const figuresText = (f: {
  gflops: number;
  memoryBandwidthGBps: number;
  layerOverheadMs: number;
  hopOverheadMs?: number;
}): string =>
  `${f.gflops} GFLOP/s, ${f.memoryBandwidthGBps} GB/s, ${f.layerOverheadMs} ms/layer` +
  (f.hopOverheadMs !== undefined ? `, ${f.hopOverheadMs} ms/hop` : '');

export async function runCalibrateCommand(args: string[], io: CliIo = processIo): Promise<number> {
  const dash = args.indexOf('--');
  const own = dash >= 0 ? args.slice(0, dash) : args;
  const command = dash >= 0 ? args.slice(dash + 1) : [];
  return runCli(io, CALIBRATE_USAGE, own, own.includes('--json'), async () => {
    const { values, client } = parseCli(own, {
      framework: { type: 'string' },
      nodes: { type: 'string' },
      'timeout-ms': { type: 'string' },
    });
    if (command.length === 0) {
      if (values.framework !== undefined || values.nodes !== undefined)
        throw new UsageError('give the calibration command after --');
      const held = await client.get<Held>('/v1/calibrations');
      if (values.json) printJson(io, held);
      else {
        const rows = Object.entries(held.calibrations).flatMap(([node, byFramework]) =>
          Object.entries(byFramework).map(
            ([fw, f]) => `${node}  ${fw}  ${figuresText(f)}  (${new Date(f.measuredAt).toISOString()})\n`,
          ),
        );
        io.stdout.write(rows.length ? rows.join('') : 'no calibrated figures\n');
      }
      return 0;
    }
    if (typeof values.framework !== 'string') throw new UsageError('--framework NAME is required (e.g. torch)');
    const timeout = values['timeout-ms'] === undefined ? undefined : Number(values['timeout-ms']);
    if (timeout !== undefined && !Number.isInteger(timeout))
      throw new UsageError('--timeout-ms: expected milliseconds');
    const nodes = nodeList(values.nodes);
    const run = await client.request<Run>('POST', '/v1/calibrations', {
      framework: values.framework,
      command,
      ...(nodes ? { nodes } : {}),
      ...(timeout !== undefined ? { timeoutMs: timeout } : {}),
    });
    if (values.json) printJson(io, run);
    else
      for (const r of run.results)
        io.stdout.write(
          r.ok
            ? `${r.nodeId}: ${run.framework} ${figuresText(r.figures)} (${(r.wallMs / 1000).toFixed(1)} s)\n`
            : `${r.nodeId}: nothing recorded: ${r.reason}\n`,
        );
    return run.results.every((r) => r.ok) ? 0 : 1;
  });
}
