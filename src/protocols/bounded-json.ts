/**
 * Arbitrary JSON data that arrives inside events and commands (task params and results): the schemas accept any
 * value there (`JsonData`), and this checks it after the schema, bounded in depth, size and string length, with
 * plain objects only. Every failure is a ValidationError naming where and the path; `guarded` makes sure a
 * decoder never throws anything else.
 */
import { ValidationError } from './errors.js';
import type { Json, Where } from './schema-kit.js';

const MAX_STRING = 65_536;
const MAX_KEY = 256;
const MAX_ITEMS = 4096;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** `v` as JSON data, at most `depth` levels and 2048 values deep and wide. */
export function boundedJson(w: Where, v: unknown, path: string, depth = 8, budget = { left: 2048 }): Json {
  const fail = (why: string): never => {
    throw new ValidationError(w, path, why);
  };
  if (--budget.left < 0) fail('value too large');
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : fail(`expected a finite number, got ${describe(v)}`);
  if (typeof v === 'string') return v.length <= MAX_STRING ? v : fail('too long');
  if (depth <= 0) fail('nested too deeply');
  if (Array.isArray(v)) {
    if (v.length > MAX_ITEMS) fail(`more than ${MAX_ITEMS} items`);
    return v.map((x, i) => boundedJson(w, x, `${path}[${i}]`, depth - 1, budget));
  }
  if (!isPlainObject(v)) return fail(`not JSON data (${describe(v)})`);
  const keys = Object.keys(v);
  if (keys.length > MAX_ITEMS) fail(`more than ${MAX_ITEMS} entries`);
  const out: Record<string, Json> = {};
  for (const k of keys) {
    if (k === '__proto__') throw new ValidationError(w, `${path}.${k}`, 'forbidden key');
    if (k.length > MAX_KEY) throw new ValidationError(w, `${path}.${k}`, 'too long');
    out[k] = boundedJson(w, v[k], `${path}.${k}`, depth - 1, budget);
  }
  return out;
}

/** Runs a decoder so that anything odd (a throwing getter, a Proxy, a stack overflow) still surfaces as ValidationError. */
export function guarded<T>(w: Where, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    throw new ValidationError(w, '', `undecodable: ${error instanceof Error ? error.message : 'unknown error'}`);
  }
}
