/**
 * POST /v1/calibrations (docs/placement.md, "Calibrated figures"): runs a framework's calibration command on each
 * named node as a one-rank `exec` job pinned to that node, so the node's runner supervisor runs it like any job (the
 * same exec policy, environment, process supervision and logs). When the job ends, its stdout is read (at most
 * MAX_CALIBRATION_OUTPUT_BYTES) and parsed strictly; only a valid result is recorded (`CalibrationRecorded`), and the
 * job is deleted either way. Each node answers its figures or why it has none.
 */
import {
  calibrationEvent,
  MAX_CALIBRATION_OUTPUT_BYTES,
  parseCalibrationOutput,
  type CalibrationFigures,
  type CalibrationRecorded,
} from '../protocols/calibration.js';
import type { InstanceView, NodeFacade } from './node-facade.js';

export interface CalibrationRequest {
  readonly framework: string;
  /** argv: the program (a path or a name the node's exec policy allows) and its arguments */
  readonly command: readonly string[];
  /** default: every node in the state */
  readonly nodes?: readonly string[] | undefined;
  /** how long one node's command may run, ms (default 60 s) */
  readonly timeoutMs?: number | undefined;
}

export type CalibrationResult =
  | { readonly nodeId: string; readonly ok: true; readonly figures: CalibrationFigures; readonly wallMs: number }
  | { readonly nodeId: string; readonly ok: false; readonly reason: string };

/** What the runner needs of a node: the facade's instances and logs, and a way to record the event. */
export type CalibrationFacade = Pick<
  NodeFacade,
  'state' | 'events' | 'createInstance' | 'getInstance' | 'deleteInstance'
> &
  Required<Pick<NodeFacade, 'runnerLog' | 'recordCalibration'>>;

export const DEFAULT_CALIBRATION_TIMEOUT_MS = 60_000;
const ENDED = new Set(['completed', 'failed']);

export async function runCalibrations(
  facade: CalibrationFacade,
  request: CalibrationRequest,
): Promise<{ readonly framework: string; readonly results: readonly CalibrationResult[] }> {
  const { state } = await facade.state();
  const nodes = request.nodes ?? Object.keys(state.nodes).sort();
  const results = await Promise.all(
    nodes.map(async (nodeId): Promise<CalibrationResult> => {
      if (!Object.hasOwn(state.nodes, nodeId)) return { nodeId, ok: false, reason: `unknown node ${nodeId}` };
      try {
        return await calibrateOne(facade, request, nodeId);
      } catch (error) {
        return { nodeId, ok: false, reason: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
  return { framework: request.framework, results };
}

async function calibrateOne(
  facade: CalibrationFacade,
  request: CalibrationRequest,
  nodeId: string,
): Promise<CalibrationResult> {
  const [program, ...args] = request.command;
  const started = Date.now();
  const instance = await facade.createInstance({
    workload: {
      kind: 'exec',
      id: `calibrate-${request.framework}`,
      memoryBytes: 0,
      layers: 1,
      command: program,
      args,
    },
    sharding: 'pipeline',
    backend: 'ring',
    nodes: [nodeId],
  });
  try {
    const ended = await untilEnded(facade, instance.id, request.timeoutMs ?? DEFAULT_CALIBRATION_TIMEOUT_MS);
    const wallMs = Date.now() - started;
    if (ended.status !== 'completed') {
      const stderr = (await readLog(facade, instance.id, 'stderr', 2048).catch(() => Buffer.alloc(0)))
        .toString('utf8')
        .trim();
      return {
        nodeId,
        ok: false,
        reason: `the command failed: ${ended.reason ?? ended.status}${stderr ? `; stderr: ${stderr.slice(-1024)}` : ''}`,
      };
    }
    const stdout = await readLog(facade, instance.id, 'stdout', MAX_CALIBRATION_OUTPUT_BYTES + 1);
    const line = parseCalibrationOutput(stdout, request.framework);
    const event: CalibrationRecorded = calibrationEvent(nodeId, line, Date.now());
    await facade.recordCalibration(event);
    const { type: _t, nodeId: _n, framework: _f, ...figures } = event;
    return { nodeId, ok: true, figures, wallMs };
  } finally {
    await facade.deleteInstance(instance.id).catch(() => undefined);
  }
}

/**
 * Until the instance has ended: checked once, then again after each event this node applies (an exec job ends by
 * its runners' events), not by polling; the feed is followed from the state read before the first check, so an
 * end applied in between is not missed.
 */
async function untilEnded(facade: CalibrationFacade, id: string, timeoutMs: number): Promise<InstanceView> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const { state } = await facade.state();
    let view = await facade.getInstance(id);
    if (ENDED.has(view.status)) return view;
    for await (const _applied of facade.events(state.lastIndex, abort.signal)) {
      view = await facade.getInstance(id);
      if (ENDED.has(view.status)) return view;
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  throw new Error(`the command did not end within ${timeoutMs} ms (stopped)`);
}

/** Rank 0's stream, at most `limit` bytes (the reader stops there: a longer output is refused by the parser). */
async function readLog(
  facade: CalibrationFacade,
  instanceId: string,
  stream: 'stdout' | 'stderr',
  limit: number,
): Promise<Buffer> {
  const abort = new AbortController();
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    const body = await facade.runnerLog({ instanceId, rank: 0, stream, follow: false }, abort.signal);
    for await (const chunk of body) {
      chunks.push(Buffer.from(chunk));
      bytes += chunk.byteLength;
      if (bytes >= limit) break;
    }
  } finally {
    abort.abort();
  }
  return Buffer.concat(chunks).subarray(0, limit);
}
