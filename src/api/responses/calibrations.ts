/** The answers about calibrations: what a framework reached on each node (POST and GET /v1/calibrations). */
import { MapOf, Type } from '../../protocols/schema-kit.js';
import { str, num, int, CLOSED, epochMs } from './kit.js';

export const calibrationFigures = Type.Object(
  {
    gflops: num,
    memoryBandwidthGBps: num,
    layerOverheadMs: num,
    hopOverheadMs: Type.Optional(num),
    measuredAt: epochMs('when the command ended'),
  },
  { ...CLOSED, description: 'what the framework reached on the node (src/protocols/calibration.ts)' },
);

export const calibrationResponses = {
  CalibrationRun: Type.Object(
    {
      framework: str,
      results: Type.Array(
        Type.Union([
          Type.Object(
            { nodeId: str, ok: Type.Literal(true), figures: calibrationFigures, wallMs: int },
            { ...CLOSED, description: 'recorded (CalibrationRecorded)' },
          ),
          Type.Object(
            { nodeId: str, ok: Type.Literal(false), reason: str },
            { ...CLOSED, description: 'nothing recorded for this node, and why' },
          ),
        ]),
      ),
    },
    { ...CLOSED, description: 'per node, the figures recorded or why none were' },
  ),
  Calibrations: Type.Object(
    {
      calibrations: MapOf(MapOf(calibrationFigures), {
        description: 'node id → framework → figures, as the replicated state holds them',
      }),
    },
    CLOSED,
  ),
};
