/**
 * Small strict readers for validating `unknown` input (decoded frames, snapshots) into typed values.
 * Every failure is a `ValidationError` naming where and the JSON path; nothing else is ever thrown
 * (see `guarded`). Plain objects only: unknown keys, class instances and `__proto__` keys are refused.
 */
import { ValidationError } from './errors.js';

export type Where = 'event' | 'frame' | 'body' | 'config';
export type Obj = Readonly<Record<string, unknown>>;

/** Identifiers (node, instance, task, workload ids): printable, bounded, never a prototype key. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,255}$/;
const MAX_STRING = 4096;
const MAX_ARRAY = 4096;

export function fail(where: Where, path: string, why: string): never {
  throw new ValidationError(where, path, why);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** A plain object with all `required` keys and nothing outside `required ∪ optional`. */
export function obj(
  w: Where,
  v: unknown,
  path: string,
  required: readonly string[],
  optional: readonly string[] = [],
): Obj {
  if (!isPlainObject(v)) fail(w, path, `expected an object, got ${describe(v)}`);
  for (const key of Object.keys(v)) {
    if (!required.includes(key) && !optional.includes(key)) fail(w, `${path}.${key}`, 'unknown field');
  }
  for (const key of required) {
    if (!Object.hasOwn(v, key) || v[key] === undefined) fail(w, `${path}.${key}`, 'missing');
  }
  return v;
}

export function str(
  w: Where,
  v: unknown,
  path: string,
  opts: { max?: number; min?: number; pattern?: RegExp } = {},
): string {
  if (typeof v !== 'string') fail(w, path, `expected a string, got ${describe(v)}`);
  if (v.length < (opts.min ?? 0)) fail(w, path, 'too short');
  if (v.length > (opts.max ?? MAX_STRING)) fail(w, path, 'too long');
  if (opts.pattern && !opts.pattern.test(v)) fail(w, path, `does not match ${String(opts.pattern)}`);
  return v;
}

export function id(w: Where, v: unknown, path: string): string {
  return str(w, v, path, { pattern: ID_PATTERN });
}

export function num(w: Where, v: unknown, path: string, min = -Infinity, max = Infinity): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(w, path, `expected a finite number, got ${describe(v)}`);
  if (v < min || v > max) fail(w, path, `out of range [${min}, ${max}]`);
  return v;
}

export function int(w: Where, v: unknown, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const n = num(w, v, path, min, max);
  if (!Number.isInteger(n)) fail(w, path, 'expected an integer');
  return n;
}

export function bool(w: Where, v: unknown, path: string): boolean {
  if (typeof v !== 'boolean') fail(w, path, `expected a boolean, got ${describe(v)}`);
  return v;
}

export function oneOf<T extends string>(w: Where, v: unknown, path: string, values: readonly T[]): T {
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v))
    fail(w, path, `expected one of ${values.join(', ')}`);
  return v as T;
}

export function arr<T>(
  w: Where,
  v: unknown,
  path: string,
  item: (x: unknown, path: string) => T,
  max = MAX_ARRAY,
): T[] {
  if (!Array.isArray(v)) fail(w, path, `expected an array, got ${describe(v)}`);
  if (v.length > max) fail(w, path, `more than ${max} items`);
  return v.map((x, i) => item(x, `${path}[${i}]`));
}

/** A string-keyed map; keys checked by `key`, built with only own data properties. */
export function record<T>(
  w: Where,
  v: unknown,
  path: string,
  key: (k: string, path: string) => string,
  item: (x: unknown, path: string) => T,
  max = MAX_ARRAY,
): Record<string, T> {
  if (!isPlainObject(v)) fail(w, path, `expected an object, got ${describe(v)}`);
  const keys = Object.keys(v);
  if (keys.length > max) fail(w, path, `more than ${max} entries`);
  const out: Record<string, T> = {};
  for (const k of keys) {
    if (k === '__proto__') fail(w, `${path}.${k}`, 'forbidden key');
    out[key(k, `${path}.${k}`)] = item(v[k], `${path}.${k}`);
  }
  return out;
}

/** Reads an optional field: `undefined` stays absent. */
export function opt<T>(v: unknown, read: (x: unknown) => T): T | undefined {
  return v === undefined ? undefined : read(v);
}

export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

/** Arbitrary JSON data (task params, results), bounded in depth and size. */
export function json(w: Where, v: unknown, path: string, depth = 8, budget = { left: 2048 }): Json {
  if (--budget.left < 0) fail(w, path, 'value too large');
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'number') return num(w, v, path);
  if (typeof v === 'string') return str(w, v, path, { max: 65536 });
  if (depth <= 0) fail(w, path, 'nested too deeply');
  if (Array.isArray(v)) return arr(w, v, path, (x, p) => json(w, x, p, depth - 1, budget));
  if (isPlainObject(v))
    return record(
      w,
      v,
      path,
      (k, p) => str(w, k, p, { max: 256 }),
      (x, p) => json(w, x, p, depth - 1, budget),
    );
  return fail(w, path, `not JSON data (${describe(v)})`);
}

/** Runs a decoder so that anything odd (a throwing getter, a Proxy, a stack overflow) still surfaces as ValidationError. */
export function guarded<T>(w: Where, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    return fail(w, '', `undecodable: ${error instanceof Error ? error.message : 'unknown error'}`);
  }
}
