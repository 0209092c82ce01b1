/**
 * Supervisor ↔ runner frames: length-prefixed msgpack over the runner child's fd 3 (a socketpair, so one
 * duplex channel). Frames down: start (once, first), connect / load / warmup / task / shutdown (each a task
 * with an id, acknowledged), cancel. Frames up: status, ack, task-status, cancel-ack, diagnostic, fatal.
 * Every decoded frame is checked strictly (exact key sets, types, bounds); a hostile frame yields a
 * `ValidationError`, never a crash.
 */
import { Packr } from 'msgpackr';
import { ValidationError } from './errors.js';
import { RUNNER_STATES, TASK_STATUSES, type RunnerStatus, type TaskStatus } from './runner-status.js';
import { compile, StringEnum, Type, type Shape, type TSchema } from './schema-kit.js';

export const RUNNER_PROTOCOL_VERSION = 1;
/** Largest frame body accepted either way (task results and diagnostics are small; this bounds a bad peer). */
export const MAX_RUNNER_FRAME_BYTES = 4 * 1024 * 1024;

export { RUNNER_STATES, TASK_STATUSES, TERMINAL_TASK_STATUSES } from './runner-status.js';
export type { RunnerState, RunnerStatus, TaskStatus } from './runner-status.js';
export type { Workload } from './runner-instance.js';

const CLOSED = { additionalProperties: false } as const;
const text = (max = 4096) => Type.String({ maxLength: max });
const id = Type.String({ minLength: 1, maxLength: 256 });
const int = (min: number, max: number) => Type.Integer({ minimum: min, maximum: max });
/** Plain data (task params, results): any value here; `plainData` bounds it after the check. */
const data = Type.Unknown();

/** A runner's status: one variant per state, so a bad field is named in the state the value is in. */
export const RunnerStatusSchema = Type.Union([
  Type.Object({ state: Type.Literal('Loading'), layersLoaded: int(0, 1e9), totalLayers: int(0, 1e9) }, CLOSED),
  Type.Object(
    { state: Type.Literal('Failed'), reason: text(), diagnostics: Type.Array(text(), { maxItems: 1000 }) },
    CLOSED,
  ),
  ...RUNNER_STATES.filter((s) => s !== 'Loading' && s !== 'Failed').map((s) =>
    Type.Object({ state: Type.Literal(s) }, CLOSED),
  ),
]);

/** What the runner child runs: the built-in ring, or a command (argv) in a directory. */
export const RunnerWorkload = Type.Union([
  Type.Object({ kind: Type.Literal('ring') }, CLOSED),
  Type.Object(
    {
      kind: Type.Literal('exec'),
      command: Type.Array(text(), { minItems: 1, maxItems: 4096 }),
      cwd: Type.Optional(text()),
    },
    CLOSED,
  ),
]);

/** Everything a runner needs to know, sent once as the first frame. */
export const RunnerStartConfig = Type.Object(
  {
    runnerId: id,
    instanceId: id,
    nodeId: id,
    rank: int(0, 65535),
    worldSize: int(1, 65536),
    layerStart: int(0, 1e9),
    layerEnd: int(0, 1e9),
    workload: RunnerWorkload,
    /** MLX ring hostfile entries for this rank ("ip:port", own entry "0.0.0.0:port"). */
    hosts: Type.Array(text(), { maxItems: 65536 }),
    hostfilePath: text(),
    /** Environment for `exec` commands (execEnv output). */
    env: Type.Record(Type.String({ pattern: '^(?!__proto__$)' }), text(65536), { additionalProperties: false }),
    /** Data-plane key the ring sockets prove when they open (src/ring/link-proof.ts); absent in open mode. */
    ringKey: Type.Optional(Type.String({ pattern: '^[0-9a-f]{32,128}$' })),
  },
  CLOSED,
);
export type RunnerStartConfig = Shape<typeof RunnerStartConfig>;

export type LifecycleTaskType = 'connect' | 'load' | 'warmup' | 'shutdown';
const taskFrame = <T extends string>(type: T) => Type.Object({ type: Type.Literal(type), taskId: id }, CLOSED);

/** Supervisor → runner. */
export const DownFrameSchemas = {
  start: Type.Object(
    { type: Type.Literal('start'), v: Type.Literal(RUNNER_PROTOCOL_VERSION), config: RunnerStartConfig },
    CLOSED,
  ),
  connect: taskFrame('connect'),
  load: taskFrame('load'),
  warmup: taskFrame('warmup'),
  shutdown: taskFrame('shutdown'),
  task: Type.Object(
    { type: Type.Literal('task'), taskId: id, op: id, params: Type.Object({}, { additionalProperties: true }) },
    CLOSED,
  ),
  cancel: taskFrame('cancel'),
};
/** Runner → supervisor. */
export const UpFrameSchemas = {
  status: Type.Object({ type: Type.Literal('status'), status: RunnerStatusSchema }, CLOSED),
  ack: taskFrame('ack'),
  'task-status': Type.Object(
    {
      type: Type.Literal('task-status'),
      taskId: id,
      status: StringEnum(TASK_STATUSES),
      result: Type.Optional(data),
      error: Type.Optional(text(65536)),
    },
    CLOSED,
  ),
  'cancel-ack': taskFrame('cancel-ack'),
  diagnostic: Type.Object(
    { type: Type.Literal('diagnostic'), level: StringEnum(['info', 'warn', 'error']), message: text(65536) },
    CLOSED,
  ),
  fatal: Type.Object({ type: Type.Literal('fatal'), message: text(65536) }, CLOSED),
};
const union = (schemas: Record<string, TSchema>) => Type.Union(Object.values(schemas) as [TSchema]);

export type DownFrame =
  | { readonly type: 'start'; readonly v: number; readonly config: RunnerStartConfig }
  | { readonly type: LifecycleTaskType; readonly taskId: string }
  | {
      readonly type: 'task';
      readonly taskId: string;
      readonly op: string;
      readonly params: Readonly<Record<string, unknown>>;
    }
  | { readonly type: 'cancel'; readonly taskId: string };
export type UpFrame =
  | { readonly type: 'status'; readonly status: RunnerStatus }
  | { readonly type: 'ack' | 'cancel-ack'; readonly taskId: string }
  | {
      readonly type: 'task-status';
      readonly taskId: string;
      readonly status: TaskStatus;
      readonly result?: unknown;
      readonly error?: string;
    }
  | Shape<(typeof UpFrameSchemas)['diagnostic']>
  | Shape<(typeof UpFrameSchemas)['fatal']>;

/** Plain data only (msgpack maps, arrays, scalars, bytes), bounded depth: task params and results, after the check. */
function plainData(v: unknown, path: string, depth = 0): unknown {
  const fail = (why: string): never => {
    throw new ValidationError('frame', path, why);
  };
  if (depth > 16) fail('nested too deeply');
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number' || v instanceof Uint8Array)
    return v;
  if (Array.isArray(v)) return v.map((item, i) => plainData(item, `${path}[${i}]`, depth + 1));
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
      if (k === '__proto__') fail(`forbidden key ${k}`);
      out[k] = plainData(item, `${path}.${k}`, depth + 1);
    }
    return out;
  }
  return fail('not plain data');
}

const statusCodec = compile(RunnerStatusSchema, 'frame', 'status');
const configCodec = compile(RunnerStartConfig, 'frame', 'config');
const downCodec = compile(union(DownFrameSchemas), 'frame');
const upCodec = compile(union(UpFrameSchemas), 'frame');

export function decodeRunnerStatus(v: unknown, path = 'status'): RunnerStatus {
  return statusCodec.decode(v, path) as RunnerStatus;
}

/** The schema, then the rules it cannot say: rank below worldSize, layerEnd from layerStart. */
export function decodeStartConfig(v: unknown, path = 'config'): RunnerStartConfig {
  return checkStartConfig(configCodec.decode(v, path), path);
}
function checkStartConfig(c: RunnerStartConfig, path: string): RunnerStartConfig {
  if (c.rank >= c.worldSize)
    throw new ValidationError('frame', `${path}.rank`, `expected an integer in [0, ${c.worldSize - 1}]`);
  if (c.layerEnd < c.layerStart)
    throw new ValidationError('frame', `${path}.layerEnd`, `expected an integer in [${c.layerStart}, 1000000000]`);
  return c;
}

export function decodeDownFrame(v: unknown): DownFrame {
  const f = downCodec.decode(v) as DownFrame;
  if (f.type === 'start') return { ...f, config: checkStartConfig(f.config, 'config') };
  if (f.type === 'task') {
    const params = plainData(f.params, 'params');
    if (params instanceof Uint8Array) throw new ValidationError('frame', 'params', 'expected an object');
    return { ...f, params: params as Record<string, unknown> };
  }
  return f;
}

export function decodeUpFrame(v: unknown): UpFrame {
  const f = upCodec.decode(v) as UpFrame;
  if (f.type === 'task-status' && f.result !== undefined) return { ...f, result: plainData(f.result, 'result') };
  return f;
}

function fail(path: string, why: string): never {
  throw new ValidationError('frame', path, why);
}

// ---- framing: u32 big-endian length, then one msgpack value ----
const packr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false });

export function encodeFrame(frame: DownFrame | UpFrame): Buffer {
  const body = packr.pack(frame);
  if (body.length > MAX_RUNNER_FRAME_BYTES)
    throw new ValidationError('frame', '', `frame of ${body.length} bytes exceeds ${MAX_RUNNER_FRAME_BYTES}`);
  const out = Buffer.allocUnsafe(4 + body.length);
  out.writeUInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
}

/** Incremental splitter: push stream chunks, get whole frame bodies decoded (not yet validated). */
export class FrameSplitter {
  #buf: Buffer = Buffer.alloc(0);

  /** Throws ValidationError on an oversized length or undecodable body; the caller should close the channel. */
  push(chunk: Uint8Array): unknown[] {
    this.#buf = this.#buf.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.#buf, chunk]);
    const out: unknown[] = [];
    while (this.#buf.length >= 4) {
      const len = this.#buf.readUInt32BE(0);
      if (len > MAX_RUNNER_FRAME_BYTES) fail('', `frame length ${len} exceeds ${MAX_RUNNER_FRAME_BYTES}`);
      if (this.#buf.length < 4 + len) break;
      const body = this.#buf.subarray(4, 4 + len);
      this.#buf = this.#buf.subarray(4 + len);
      try {
        out.push(packr.unpack(body));
      } catch (err) {
        fail('', `undecodable msgpack: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return out;
  }
}
