/**
 * Calibrated figures (docs/placement.md, "Calibrated figures"): what a framework (torch, …) achieves on a node, as
 * the one JSON line a calibration command prints, and as the `CalibrationRecorded` event that stores them per node
 * and framework in the replicated state. The child's output is hostile input: `parseCalibrationOutput` takes
 * exactly one result line, strictly checked, and refuses anything else with a reason (nothing is then recorded).
 */
import { TorusError } from './errors.js';
import { Amount, CLOSED, Id } from './event-fields.js';
import { compile, Type, type Shape } from './schema-kit.js';

/** A framework's name: short, lower case, a key of the state (never a prototype key: it starts with a letter). */
export const FRAMEWORK_PATTERN = /^[a-z][a-z0-9._-]{0,31}$/;
export const Framework = Type.String({
  minLength: 1,
  maxLength: 32,
  pattern: FRAMEWORK_PATTERN.source,
  description: 'a framework name, e.g. torch',
});

/**
 * The figures, with the bounds every one must meet (finite by JSON Schema's numbers being checked as numbers;
 * NaN and Infinity are not JSON). gflops: the framework's compute rate in GFLOP/s; memoryBandwidthGBps: the rate
 * it reads weights and KV cache at, 10^9 bytes/s; layerOverheadMs: the fixed cost of one layer, ms;
 * hopOverheadMs (optional: older calibrations lack it): the framework's own cost of passing one stage's output to
 * the next process (send, the receiver's wake-up), measured between two processes on the node's loopback, ms.
 */
export const calibrationFigureFields = {
  gflops: Type.Number({ exclusiveMinimum: 0, maximum: 1e9, description: 'compute the framework reaches, GFLOP/s' }),
  memoryBandwidthGBps: Type.Number({
    exclusiveMinimum: 0,
    maximum: 1e6,
    description: 'bytes (weights, KV cache) the framework reads per second, 10^9 bytes/s',
  }),
  layerOverheadMs: Type.Number({
    minimum: 0,
    maximum: 10_000,
    description: 'fixed cost of one layer per step (launches, small ops), ms',
  }),
  hopOverheadMs: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1000,
      description: "framework's cost of one pipeline hop between two processes, the link aside, ms",
    }),
  ),
};

/** The line a calibration command prints (one line of stdout, other lines are its own). */
export const CalibrationLine = Type.Object(
  { torusCalibration: Type.Literal(1), framework: Framework, ...calibrationFigureFields },
  CLOSED,
);
export type CalibrationLine = Shape<typeof CalibrationLine>;

/** A node's calibrated figures for one framework, as the state holds them; `measuredAt`: ms since the epoch. */
export const CalibrationFigures = Type.Object({ ...calibrationFigureFields, measuredAt: Amount }, CLOSED);
export type CalibrationFigures = Shape<typeof CalibrationFigures>;

/** `nodeId` ran the calibration command of `framework` and it printed these figures. */
export const CalibrationRecorded = Type.Object(
  {
    type: Type.Literal('CalibrationRecorded'),
    nodeId: Id,
    framework: Framework,
    ...calibrationFigureFields,
    measuredAt: Amount,
  },
  CLOSED,
);
export type CalibrationRecorded = Shape<typeof CalibrationRecorded>;

/** Frameworks a node keeps figures for: a further framework is not recorded (the state stays bounded). */
export const MAX_FRAMEWORKS_PER_NODE = 16;
/** The most of a calibration's stdout torus reads; more is refused, not truncated. */
export const MAX_CALIBRATION_OUTPUT_BYTES = 1 << 20;
/** The longest result line: the line is ~150 bytes; anything near this is not one. */
export const MAX_CALIBRATION_LINE_BYTES = 4096;
/** What marks a line as the result: any line naming it is checked as one (and must be the only one). */
const MARK = '"torusCalibration"';

const lineCodec = compile(CalibrationLine, 'frame', 'line');

/** Why a calibration's output was refused (the API answers it per node): `calibration output: <why>`. */
export class CalibrationOutputError extends TorusError {
  constructor(why: string) {
    super('TORUS_PROTOCOL_INVALID', `calibration output: ${why}`, { where: 'calibration output' });
  }
}

/**
 * The figures of a calibration's stdout, or a CalibrationOutputError saying why not: output over 1 MiB, no result
 * line or several, a result line too long, not JSON, not the schema (NaN, negative, huge, missing, extra fields), or
 * naming another framework than the one asked for. Lines without the mark are the command's own and ignored.
 */
export function parseCalibrationOutput(stdout: Uint8Array | string, framework: string): CalibrationLine {
  const bytes = typeof stdout === 'string' ? Buffer.byteLength(stdout) : stdout.byteLength;
  if (bytes > MAX_CALIBRATION_OUTPUT_BYTES)
    throw new CalibrationOutputError(`stdout is ${bytes} bytes, more than ${MAX_CALIBRATION_OUTPUT_BYTES}`);
  const text = typeof stdout === 'string' ? stdout : Buffer.from(stdout).toString('utf8');
  const results = text.split('\n').filter((line) => line.includes(MARK));
  if (results.length === 0) throw new CalibrationOutputError(`no result line (a JSON line with ${MARK})`);
  if (results.length > 1) throw new CalibrationOutputError(`${results.length} result lines, exactly one expected`);
  const line = (results[0] as string).trim();
  const lineBytes = Buffer.byteLength(line);
  if (lineBytes > MAX_CALIBRATION_LINE_BYTES)
    throw new CalibrationOutputError(`the result line is ${lineBytes} bytes, more than ${MAX_CALIBRATION_LINE_BYTES}`);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new CalibrationOutputError('the result line is not JSON');
  }
  let figures: CalibrationLine;
  try {
    figures = lineCodec.decode(value);
  } catch (error) {
    // the codec names the field (`frame line.gflops: …`); the reason keeps that part
    throw new CalibrationOutputError((error instanceof Error ? error.message : String(error)).replace(/^frame /, ''));
  }
  if (figures.framework !== framework)
    throw new CalibrationOutputError(`the result names framework ${figures.framework}, not ${framework}`);
  return figures;
}

/** The event recording a parsed result (the caller stamps `measuredAt` when the command ended). */
export function calibrationEvent(nodeId: string, line: CalibrationLine, measuredAt: number): CalibrationRecorded {
  return {
    type: 'CalibrationRecorded',
    nodeId,
    framework: line.framework,
    gflops: line.gflops,
    memoryBandwidthGBps: line.memoryBandwidthGBps,
    layerOverheadMs: line.layerOverheadMs,
    ...(line.hopOverheadMs !== undefined ? { hopOverheadMs: line.hopOverheadMs } : {}),
    measuredAt,
  };
}
