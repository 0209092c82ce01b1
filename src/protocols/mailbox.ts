/**
 * Frames exchanged between the host (main thread) and an actor's worker thread.
 * A post carries a msgpack-encoded array of frames (batched), plus large binary payloads moved out of band
 * as transferred ArrayBuffers. Every frame is validated before use: a hostile or buggy sender cannot crash
 * the receiver, it only gets its frame rejected.
 */
import { ValidationError, type ErrorJson } from '../core/errors.js';

/** A message body: any plain object with a literal `type`. */
export interface Body {
  readonly type: string;
  readonly [key: string]: unknown;
}

export type Frame =
  /** A message to an address; `corr` set means the sender awaits a reply frame with the same `corr`. */
  | { readonly t: 'msg'; readonly from: string; readonly to: string; readonly body: Body; readonly corr?: number }
  | { readonly t: 'reply'; readonly corr: number; readonly ok: true; readonly body: unknown }
  | { readonly t: 'reply'; readonly corr: number; readonly ok: false; readonly error: ErrorJson }
  /** Host → worker: finish the current message, clean up, answer `stopped`, within the deadline. */
  | { readonly t: 'stop'; readonly deadlineMs: number }
  /** Worker → host: started and serving. */
  | { readonly t: 'ready' }
  | { readonly t: 'stopped' }
  /** Worker → host: the actor's serialisable view changed. */
  | { readonly t: 'snapshot'; readonly view: unknown }
  /** Worker → host: something went wrong; `fatal` means the actor cannot go on and must be restarted. */
  | { readonly t: 'fault'; readonly fatal: boolean; readonly error: ErrorJson };

export const MAX_FRAME_BYTES = 256 * 1024 * 1024;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function exactKeys(value: Record<string, unknown>, allowed: readonly string[], path: string): void {
  // for-in, not Object.keys: this runs once per frame on the hot path and should not allocate.
  for (const key in value) {
    if (!allowed.includes(key)) throw new ValidationError('frame', `${path}.${key}`, 'unknown field');
  }
}

function requireString(value: Record<string, unknown>, key: string, path: string): string {
  const v = value[key];
  if (typeof v !== 'string' || v.length === 0 || v.length > 512) throw new ValidationError('frame', `${path}.${key}`, 'expected a non-empty string');
  return v;
}

function requireCorr(value: Record<string, unknown>, path: string): number {
  const v = value.corr;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new ValidationError('frame', `${path}.corr`, 'expected a non-negative integer');
  return v;
}

export function isBody(value: unknown): value is Body {
  return isRecord(value) && typeof value.type === 'string' && value.type.length > 0;
}

function decodeErrorJson(value: unknown, path: string): ErrorJson {
  if (!isRecord(value) || typeof value.code !== 'string' || typeof value.message !== 'string') {
    throw new ValidationError('frame', path, 'expected an error {code, message}');
  }
  return value as unknown as ErrorJson;
}

/** Validates one decoded frame; throws ValidationError naming the field. */
export function decodeFrame(value: unknown, path = 'frame'): Frame {
  if (!isRecord(value)) throw new ValidationError('frame', path, 'expected an object');
  switch (value.t) {
    case 'msg': {
      exactKeys(value, ['t', 'from', 'to', 'body', 'corr'], path);
      requireString(value, 'from', path);
      requireString(value, 'to', path);
      if (!isBody(value.body)) throw new ValidationError('frame', `${path}.body`, 'expected an object with a string `type`');
      if (value.corr !== undefined) requireCorr(value, path);
      // Every field is checked: hand back the decoded object itself rather than a copy (one less allocation per frame).
      return value as unknown as Frame;
    }
    case 'reply': {
      exactKeys(value, ['t', 'corr', 'ok', 'body', 'error'], path);
      const corr = requireCorr(value, path);
      if (value.ok === true) return { t: 'reply', corr, ok: true, body: value.body };
      if (value.ok === false) return { t: 'reply', corr, ok: false, error: decodeErrorJson(value.error, `${path}.error`) };
      throw new ValidationError('frame', `${path}.ok`, 'expected a boolean');
    }
    case 'stop': {
      exactKeys(value, ['t', 'deadlineMs'], path);
      const d = value.deadlineMs;
      if (typeof d !== 'number' || !(d >= 0)) throw new ValidationError('frame', `${path}.deadlineMs`, 'expected a non-negative number');
      return { t: 'stop', deadlineMs: d };
    }
    case 'ready':
    case 'stopped':
      exactKeys(value, ['t'], path);
      return { t: value.t };
    case 'snapshot':
      exactKeys(value, ['t', 'view'], path);
      return { t: 'snapshot', view: value.view };
    case 'fault': {
      exactKeys(value, ['t', 'fatal', 'error'], path);
      if (typeof value.fatal !== 'boolean') throw new ValidationError('frame', `${path}.fatal`, 'expected a boolean');
      return { t: 'fault', fatal: value.fatal, error: decodeErrorJson(value.error, `${path}.error`) };
    }
    default:
      throw new ValidationError('frame', `${path}.t`, `unknown frame type ${JSON.stringify(value.t)?.slice(0, 40)}`);
  }
}
