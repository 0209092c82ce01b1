/**
 * Small strict validators shared by the cluster wire formats (peer frames, discovery TXT).
 * Every helper throws ValidationError('frame', path, why); nothing here trusts the input's prototype.
 */
import { ValidationError, type ErrorJson, isErrorCode } from '../core/errors.js';

export type Rec = Record<string, unknown>;

export function fail(path: string, why: string): never {
  throw new ValidationError('frame', path, why);
}

export function record(value: unknown, path: string, allowed: readonly string[]): Rec {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || ArrayBuffer.isView(value)) fail(path, 'expected an object');
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) fail(path, 'expected a plain object');
  for (const key of Object.keys(value)) if (!allowed.includes(key)) fail(`${path}.${key}`, 'unknown field');
  return value as Rec;
}

export function str(rec: Rec, key: string, path: string, max = 256): string {
  const v = Object.hasOwn(rec, key) ? rec[key] : undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > max) fail(`${path}.${key}`, `expected a non-empty string of at most ${max} chars`);
  return v;
}

export function optStr(rec: Rec, key: string, path: string, max = 256): string | undefined {
  return Object.hasOwn(rec, key) && rec[key] !== undefined ? str(rec, key, path, max) : undefined;
}

/** A safe integer in [min, max]. */
export function int(rec: Rec, key: string, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = Object.hasOwn(rec, key) ? rec[key] : undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) fail(`${path}.${key}`, `expected an integer in [${min}, ${max}]`);
  return v;
}

export function num(rec: Rec, key: string, path: string): number {
  const v = Object.hasOwn(rec, key) ? rec[key] : undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(`${path}.${key}`, 'expected a finite number');
  return v;
}

export function bool(rec: Rec, key: string, path: string): boolean {
  const v = Object.hasOwn(rec, key) ? rec[key] : undefined;
  if (typeof v !== 'boolean') fail(`${path}.${key}`, 'expected a boolean');
  return v;
}

export function oneOf<T extends string>(rec: Rec, key: string, path: string, values: readonly T[]): T {
  const v = Object.hasOwn(rec, key) ? rec[key] : undefined;
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) fail(`${path}.${key}`, `expected one of ${values.join(', ')}`);
  return v as T;
}

export function arr(rec: Rec, key: string, path: string, max: number): unknown[] {
  const v = Object.hasOwn(rec, key) ? rec[key] : undefined;
  if (!Array.isArray(v)) fail(`${path}.${key}`, 'expected an array');
  if (v.length > max) fail(`${path}.${key}`, `at most ${max} items`);
  return v;
}

/** An opaque event-like body: a plain object with a string `type` (its own decoder checks the rest). */
export function body(value: unknown, path: string): { readonly type: string; readonly [k: string]: unknown } {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || ArrayBuffer.isView(value)) fail(path, 'expected an object');
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) fail(path, 'expected a plain object');
  const type = (value as Rec).type;
  if (typeof type !== 'string' || type.length === 0 || type.length > 64) fail(`${path}.type`, 'expected a string type');
  return value as { type: string };
}

export function errorJson(value: unknown, path: string): ErrorJson {
  const rec = record(value, path, ['code', 'message', 'details']);
  if (!isErrorCode(rec.code)) fail(`${path}.code`, 'unknown error code');
  const message = str(rec, 'message', path, 4096);
  const raw = rec.details;
  const details = raw === undefined ? {} : typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Rec) : fail(`${path}.details`, 'expected an object');
  return { code: rec.code, message, details };
}
