/**
 * Supervisor ↔ runner frames: length-prefixed msgpack over the runner child's fd 3 (a socketpair, so one
 * duplex channel). Frames down: start (once, first), connect / load / warmup / task / shutdown (each a task
 * with an id, acknowledged), cancel. Frames up: status, ack, task-status, cancel-ack, diagnostic, fatal.
 * Every decoded frame is checked strictly (exact key sets, types, bounds); a hostile frame yields a
 * `ValidationError`, never a crash.
 */
import { Packr } from 'msgpackr';
import { ValidationError } from '../core/errors.js';
import type { Workload } from '../core/runner/instance.js';
import { RUNNER_STATES, TASK_STATUSES, type RunnerStatus, type TaskStatus } from '../core/runner/status.js';

export const RUNNER_PROTOCOL_VERSION = 1;
/** Largest frame body accepted either way (task results and diagnostics are small; this bounds a bad peer). */
export const MAX_RUNNER_FRAME_BYTES = 4 * 1024 * 1024;

export { RUNNER_STATES, TASK_STATUSES, TERMINAL_TASK_STATUSES } from '../core/runner/status.js';
export type { RunnerState, RunnerStatus, TaskStatus } from '../core/runner/status.js';
export type { Workload } from '../core/runner/instance.js';

/** Everything a runner needs to know, sent once as the first frame. */
export interface RunnerStartConfig {
  readonly runnerId: string;
  readonly instanceId: string;
  readonly nodeId: string;
  readonly rank: number;
  readonly worldSize: number;
  readonly layerStart: number;
  readonly layerEnd: number;
  readonly workload: Workload;
  /** MLX ring hostfile entries for this rank ("ip:port", own entry "0.0.0.0:port"). */
  readonly hosts: readonly string[];
  readonly hostfilePath: string;
  /** Environment for `exec` commands (execEnv output). */
  readonly env: Readonly<Record<string, string>>;
  /** Data-plane key the ring sockets prove when they open (src/ring/link-proof.ts); absent in open mode. */
  readonly ringKey?: string;
}

export type LifecycleTaskType = 'connect' | 'load' | 'warmup' | 'shutdown';
export type DownFrame =
  | { readonly type: 'start'; readonly v: number; readonly config: RunnerStartConfig }
  | { readonly type: LifecycleTaskType; readonly taskId: string }
  | { readonly type: 'task'; readonly taskId: string; readonly op: string; readonly params: Readonly<Record<string, unknown>> }
  | { readonly type: 'cancel'; readonly taskId: string };

export type UpFrame =
  | { readonly type: 'status'; readonly status: RunnerStatus }
  | { readonly type: 'ack'; readonly taskId: string }
  | { readonly type: 'task-status'; readonly taskId: string; readonly status: TaskStatus; readonly result?: unknown; readonly error?: string }
  | { readonly type: 'cancel-ack'; readonly taskId: string }
  | { readonly type: 'diagnostic'; readonly level: 'info' | 'warn' | 'error'; readonly message: string }
  | { readonly type: 'fatal'; readonly message: string };

// ---- strict validation helpers (local: each protocol file owns its checks) ----
type Obj = Record<string, unknown>;
function fail(path: string, why: string): never {
  throw new ValidationError('frame', path, why);
}
function object(v: unknown, path: string, required: readonly string[], optional: readonly string[] = []): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Uint8Array) fail(path, 'expected an object');
  const o = v as Obj;
  for (const key of Object.keys(o)) {
    if (!required.includes(key) && !optional.includes(key)) fail(`${path}.${key}`, 'unknown field');
  }
  for (const key of required) if (!Object.hasOwn(o, key)) fail(`${path}.${key}`, 'missing');
  return o;
}
function str(v: unknown, path: string, max = 4096): string {
  if (typeof v !== 'string') fail(path, 'expected a string');
  if (v.length > max) fail(path, `longer than ${max}`);
  return v;
}
function id(v: unknown, path: string): string {
  const s = str(v, path, 256);
  if (s.length === 0) fail(path, 'empty id');
  return s;
}
function int(v: unknown, path: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail(path, `expected an integer in [${min}, ${max}]`);
  return v;
}
function strList(v: unknown, path: string, maxItems: number): string[] {
  if (!Array.isArray(v)) fail(path, 'expected an array');
  if (v.length > maxItems) fail(path, `more than ${maxItems} items`);
  return v.map((item, i) => str(item, `${path}[${i}]`));
}
function oneOf<T extends string>(v: unknown, path: string, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) fail(path, `expected one of ${allowed.join(', ')}`);
  return v as T;
}
/** Plain data only (msgpack maps, arrays, scalars), bounded depth: task params and results. */
function plain(v: unknown, path: string, depth = 0): unknown {
  if (depth > 16) fail(path, 'nested too deeply');
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return v;
  if (v instanceof Uint8Array) return v;
  if (Array.isArray(v)) return v.map((item, i) => plain(item, `${path}[${i}]`, depth + 1));
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Obj = {};
    for (const [k, item] of Object.entries(v as Obj)) {
      if (k === '__proto__') fail(`${path}.${k}`, 'forbidden key');
      out[k] = plain(item, `${path}.${k}`, depth + 1);
    }
    return out;
  }
  return fail(path, 'not plain data');
}
function record(v: unknown, path: string): Record<string, string> {
  const o = object(v, path, [], Object.keys(v !== null && typeof v === 'object' ? v : {}));
  const out: Record<string, string> = {};
  for (const [k, item] of Object.entries(o)) {
    if (k === '__proto__') fail(`${path}.${k}`, 'forbidden key');
    out[k] = str(item, `${path}.${k}`, 65536);
  }
  return out;
}

export function decodeRunnerStatus(v: unknown, path = 'status'): RunnerStatus {
  const state = oneOf((v as Obj | null)?.state, `${path}.state`, RUNNER_STATES);
  if (state === 'Loading') {
    const o = object(v, path, ['state', 'layersLoaded', 'totalLayers']);
    return { state, layersLoaded: int(o.layersLoaded, `${path}.layersLoaded`, 0, 1e9), totalLayers: int(o.totalLayers, `${path}.totalLayers`, 0, 1e9) };
  }
  if (state === 'Failed') {
    const o = object(v, path, ['state', 'reason', 'diagnostics']);
    return { state, reason: str(o.reason, `${path}.reason`), diagnostics: strList(o.diagnostics, `${path}.diagnostics`, 1000) };
  }
  object(v, path, ['state']);
  return { state };
}

function decodeWorkload(v: unknown, path: string): Workload {
  const kind = oneOf((v as Obj | null)?.kind, `${path}.kind`, ['ring', 'exec'] as const);
  if (kind === 'ring') {
    object(v, path, ['kind']);
    return { kind };
  }
  const o = object(v, path, ['kind', 'command'], ['cwd']);
  const command = strList(o.command, `${path}.command`, 4096);
  if (command.length === 0) fail(`${path}.command`, 'empty command');
  return o.cwd === undefined ? { kind, command } : { kind, command, cwd: str(o.cwd, `${path}.cwd`) };
}

export function decodeStartConfig(v: unknown, path = 'config'): RunnerStartConfig {
  const o = object(v, path, ['runnerId', 'instanceId', 'nodeId', 'rank', 'worldSize', 'layerStart', 'layerEnd', 'workload', 'hosts',
    'hostfilePath', 'env', 'ringKey']);
  const ringKey = o.ringKey === undefined ? undefined : str(o.ringKey, `${path}.ringKey`);
  if (ringKey !== undefined && !/^[0-9a-f]{32,128}$/.test(ringKey)) throw new ValidationError('frame', `${path}.ringKey`, 'expected a hex key');
  const worldSize = int(o.worldSize, `${path}.worldSize`, 1, 65536);
  const rank = int(o.rank, `${path}.rank`, 0, worldSize - 1);
  const layerStart = int(o.layerStart, `${path}.layerStart`, 0, 1e9);
  const layerEnd = int(o.layerEnd, `${path}.layerEnd`, layerStart, 1e9);
  return {
    runnerId: id(o.runnerId, `${path}.runnerId`), instanceId: id(o.instanceId, `${path}.instanceId`), nodeId: id(o.nodeId, `${path}.nodeId`),
    rank, worldSize, layerStart, layerEnd, workload: decodeWorkload(o.workload, `${path}.workload`),
    hosts: strList(o.hosts, `${path}.hosts`, 65536), hostfilePath: str(o.hostfilePath, `${path}.hostfilePath`), env: record(o.env, `${path}.env`),
    ...(ringKey !== undefined ? { ringKey } : {}),
  };
}

export function decodeDownFrame(v: unknown): DownFrame {
  const type = oneOf((v as Obj | null)?.type, 'type', ['start', 'connect', 'load', 'warmup', 'shutdown', 'task', 'cancel'] as const);
  switch (type) {
    case 'start': {
      const o = object(v, '', ['type', 'v', 'config']);
      if (o.v !== RUNNER_PROTOCOL_VERSION) fail('v', `unsupported version ${String(o.v)}`);
      return { type, v: RUNNER_PROTOCOL_VERSION, config: decodeStartConfig(o.config) };
    }
    case 'task': {
      const o = object(v, '', ['type', 'taskId', 'op', 'params']);
      const params = plain(o.params, 'params');
      if (params === null || typeof params !== 'object' || Array.isArray(params) || params instanceof Uint8Array) fail('params', 'expected an object');
      return { type, taskId: id(o.taskId, 'taskId'), op: id(o.op, 'op'), params: params as Obj };
    }
    default: {
      const o = object(v, '', ['type', 'taskId']);
      return { type, taskId: id(o.taskId, 'taskId') };
    }
  }
}

export function decodeUpFrame(v: unknown): UpFrame {
  const type = oneOf((v as Obj | null)?.type, 'type', ['status', 'ack', 'task-status', 'cancel-ack', 'diagnostic', 'fatal'] as const);
  switch (type) {
    case 'status': return { type, status: decodeRunnerStatus(object(v, '', ['type', 'status']).status) };
    case 'ack':
    case 'cancel-ack': return { type, taskId: id(object(v, '', ['type', 'taskId']).taskId, 'taskId') };
    case 'task-status': {
      const o = object(v, '', ['type', 'taskId', 'status'], ['result', 'error']);
      const frame: { type: 'task-status'; taskId: string; status: TaskStatus; result?: unknown; error?: string } =
        { type, taskId: id(o.taskId, 'taskId'), status: oneOf(o.status, 'status', TASK_STATUSES) };
      if (o.result !== undefined) frame.result = plain(o.result, 'result');
      if (o.error !== undefined) frame.error = str(o.error, 'error', 65536);
      return frame;
    }
    case 'diagnostic': {
      const o = object(v, '', ['type', 'level', 'message']);
      return { type, level: oneOf(o.level, 'level', ['info', 'warn', 'error'] as const), message: str(o.message, 'message', 65536) };
    }
    case 'fatal': return { type, message: str(object(v, '', ['type', 'message']).message, 'message', 65536) };
  }
}

// ---- framing: u32 big-endian length, then one msgpack value ----
const packr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false });

export function encodeFrame(frame: DownFrame | UpFrame): Buffer {
  const body = packr.pack(frame);
  if (body.length > MAX_RUNNER_FRAME_BYTES) throw new ValidationError('frame', '', `frame of ${body.length} bytes exceeds ${MAX_RUNNER_FRAME_BYTES}`);
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
