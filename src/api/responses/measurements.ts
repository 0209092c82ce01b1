/** The answers of measurements: ring and pipeline benchmarks, the device measurement, queued link measurements. */
import { INTERFACE_TYPES } from '../../protocols/events.js';
import { StringEnum, Type } from '../../protocols/schema-kit.js';
import { ref, str, num, int, opt, CLOSED, open, epochMs, errorBody } from './kit.js';

export const measurementResponses = {
  PipelineBenchResult: Type.Object(
    {
      instanceId: str,
      nodes: Type.Array(str, { description: 'ring (rank) order' }),
      layers: Type.Array(int, { description: 'layers per rank' }),
      nextHop: Type.Array(str, { description: 'per rank, the address it dials the next rank at' }),
      predicted: open("the cost model's prediction for this plan (src/actors/placement-planner/search/cost-model.ts)"),
      measured: Type.Object(
        {
          stepMs: Type.Union([num, Type.Null()]),
          tokensPerS: Type.Union([num, Type.Null()]),
          activationBytes: int,
          verifiedBytes: int,
          wrong: int,
        },
        { ...CLOSED, description: "rank 0's median step through every stage and hop; activations checked bit for bit" },
      ),
      errorPercent: Type.Union([num, Type.Null()], { description: '(measured − predicted) / predicted step time, %' }),
    },
    { ...CLOSED, description: 'a pipeline benchmark: measured beside predicted' },
  ),
  BenchRun: Type.Object(
    {
      id: str,
      status: StringEnum(['running', 'done', 'failed']),
      startedAt: epochMs('start'),
      progress: opt(
        Type.Object(
          {
            done: int,
            total: int,
            message: opt(str),
            row: opt(Type.Unknown({ description: 'the latest finished row of the table (src/ring)' })),
          },
          CLOSED,
        ),
      ),
      result: opt(ref('RingBenchResult')),
      error: opt(errorBody),
    },
    CLOSED,
  ),
  BenchRunList: Type.Object({ runs: Type.Array(ref('BenchRun')) }, CLOSED),
  RingBenchResult: open('the live benchmark table (src/bench/live/ring-bench-live.ts); busbw in GB/s as nccl-tests', {
    mode: str,
    ring: Type.Array(str, { description: 'the ring order of node ids' }),
    instanceId: str,
    rows: Type.Array(open('one (op, size) row: nccl-tests columns, median, p99')),
    avgBusbw: num,
    avgBusbwLarge: Type.Union([num, Type.Null()]),
    gloo: Type.Union(
      [
        Type.Object(
          {
            ok: Type.Literal(true),
            python: str,
            torch: str,
            iface: str,
            rows: Type.Array(Type.Object({ bytes: int, timeUs: num, medianUs: num, p99Us: num, busbw: num }, CLOSED)),
          },
          CLOSED,
        ),
        Type.Object({ ok: Type.Literal(false), reason: str }, CLOSED),
      ],
      { description: "request gloo=true: torch Gloo's all_reduce on the same nodes, or why it did not run" },
    ),
    vsGloo: Type.Array(
      Type.Object({ size: int, ringBusbw: num, glooBusbw: num, ratio: Type.Union([num, Type.Null()]) }, CLOSED),
      { description: 'ring ÷ Gloo busbw per all-reduce size' },
    ),
  }),
  DeviceMeasured: Type.Object(
    {
      device: Type.Union([
        Type.Object(
          {
            memoryBandwidthGBps: opt(num),
            gflops: opt(num),
            memoryBandwidthSource: opt(StringEnum(['measured', 'declared'])),
            gflopsSource: opt(StringEnum(['measured', 'declared'])),
            measuredAt: opt(epochMs('when the CPU was measured')),
          },
          CLOSED,
        ),
        Type.Null(),
      ]),
    },
    { ...CLOSED, description: "this node's device figures after the measurement (also in its profile)" },
  ),
  MeasureLinksQueued: Type.Object(
    {
      links: Type.Array(
        Type.Object(
          {
            sink: str,
            ip: str,
            type: opt(StringEnum(INTERFACE_TYPES)),
            measuredAt: opt(epochMs('the previous measurement')),
          },
          CLOSED,
        ),
      ),
      queued: opt(
        Type.Integer({ description: 'links waiting for the next measuring pass (this request and earlier ones)' }),
      ),
    },
    CLOSED,
  ),
};
