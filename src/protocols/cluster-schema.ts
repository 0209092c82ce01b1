/**
 * Shapes shared by the cluster wire formats: an opaque event body and an error, as TypeBox schemas
 * (./schema-kit.ts). The small readers below remain for the cluster actor's request bodies
 * (src/actors/cluster/messages.ts); they throw ValidationError('frame', path, why).
 */
import { ERROR_STATUS, ValidationError, type ErrorCode } from './errors.js';
import { StringEnum, Type } from './schema-kit.js';

/** An event as carried by the cluster: opaque here (a string `type`), checked by the topology decoder when applied. */
export interface EventBody {
  readonly type: string;
  readonly [key: string]: unknown;
}
export const EventBody = Type.Unsafe<EventBody>({
  ...Type.Object({ type: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: true }),
});

/** An error as it crosses a socket (`TorusError.toJSON()`): a registered code, a message, optional details. */
export const ErrorJsonSchema = Type.Object(
  {
    code: StringEnum(Object.keys(ERROR_STATUS) as ErrorCode[]),
    message: Type.String({ minLength: 1, maxLength: 4096 }),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);

export type Rec = Record<string, unknown>;

export function fail(path: string, why: string): never {
  throw new ValidationError('frame', path, why);
}

export function record(value: unknown, path: string, allowed: readonly string[]): Rec {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || ArrayBuffer.isView(value))
    fail(path, 'expected an object');
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) fail(path, 'expected a plain object');
  for (const key of Object.keys(value)) if (!allowed.includes(key)) fail(`${path}.${key}`, 'unknown field');
  return value as Rec;
}

export function str(rec: Rec, key: string, path: string, max = 256): string {
  const v = Object.hasOwn(rec, key) ? rec[key] : undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > max)
    fail(`${path}.${key}`, `expected a non-empty string of at most ${max} chars`);
  return v;
}

/** A safe integer in [min, max]. */
export function int(rec: Rec, key: string, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = Object.hasOwn(rec, key) ? rec[key] : undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max)
    fail(`${path}.${key}`, `expected an integer in [${min}, ${max}]`);
  return v;
}

/** An opaque event-like body: a plain object with a string `type` (its own decoder checks the rest). */
export function body(value: unknown, path: string): { readonly type: string; readonly [k: string]: unknown } {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || ArrayBuffer.isView(value))
    fail(path, 'expected an object');
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) fail(path, 'expected a plain object');
  const type = (value as Rec).type;
  if (typeof type !== 'string' || type.length === 0 || type.length > 64) fail(`${path}.type`, 'expected a string type');
  return value as { type: string };
}
