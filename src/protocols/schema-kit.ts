/**
 * The one way torus describes a shape that crosses a boundary (HTTP bodies and answers, peer frames, mailbox
 * bodies, runner frames, events): a TypeBox schema. From it come the TypeScript type (`Shape<S>`), the runtime
 * check (`compile`, a TypeCompiler check built once) and the JSON Schema the OpenAPI document serves (the
 * schema object itself). `decode` turns TypeBox's first error into today's ValidationError: the same `where`,
 * the field path written `workload.env["A-B"]` / `event.instance.nodes[1]`, and a short reason.
 * Rules a schema cannot say (cross-field, normalising, defaults) stay small functions after the check.
 */
import { createRequire } from 'node:module';
import { ValidationError } from './errors.js';
import {
  Errors,
  FormatRegistry,
  Kind,
  Type,
  TypeCompiler,
  TypeRegistry,
  ValueErrorType,
  type ObjectOptions,
  type SchemaOptions,
  type Static,
  type TSchema,
  type TUnsafe,
  type TypeCheck,
  type ValueError,
} from './typebox.js';

export { Type, type Static, type TSchema } from './typebox.js';

export type Where = 'body' | 'query' | 'params' | 'frame' | 'event' | 'config';

/** Decoded values are never mutated: the types say so all the way down (a tuple stays a tuple). */
export type DeepReadonly<T> = T extends readonly [unknown, ...unknown[]]
  ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
  : T extends (infer U)[]
    ? readonly DeepReadonly<U>[]
    : T extends readonly (infer U)[]
      ? readonly DeepReadonly<U>[]
      : T extends object
        ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
        : T;
/** The TypeScript type of a schema, read-only. */
export type Shape<S extends TSchema> = DeepReadonly<Static<S>>;

// A string from a fixed list, rendered as JSON Schema `enum` (TypeBox's own Union of Literals renders `anyOf`).
TypeRegistry.Set<{ enum: readonly string[] }>(
  'StringEnum',
  (schema, value) => typeof value === 'string' && schema.enum.includes(value),
);
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, [Kind]: 'StringEnum', type: 'string', enum: [...values] });
}

/**
 * `format: 'ip'`: an IPv4 or IPv6 address as node:net reads it. Only in wire schemas, not the OpenAPI document.
 * node:net is loaded on the first check: importing it costs a worker thread that never checks an address ~5 ms.
 */
let isIP: ((input: string) => number) | undefined;
FormatRegistry.Set(
  'ip',
  (value) => (isIP ??= (createRequire(import.meta.url)('node:net') as typeof import('node:net')).isIP)(value) !== 0,
);
const FORMAT_WHY: Readonly<Record<string, string>> = { ip: 'not an IP address' };

/** A string-keyed map rendered `{type: object, additionalProperties: V}` (TypeBox's Record renders patternProperties). */
export function MapOf<V extends TSchema>(value: V, options: ObjectOptions = {}): TUnsafe<Record<string, Static<V>>> {
  return Type.Unsafe<Record<string, Static<V>>>(Type.Object({}, { ...options, additionalProperties: value }));
}

/** Arbitrary JSON data (task params, results): any value here; its bounds are `boundedJson`'s, after the check. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };
export const JsonData = (options: SchemaOptions = {}): TUnsafe<Json> => Type.Unsafe<Json>({ ...Type.Unknown(options) });

/**
 * The decoded value as fresh plain data: absent optional fields (`undefined`, which structured clone and msgpack
 * carry) dropped so values compare and serialise canonically, and anything that is not plain data (a class
 * instance, a typed array where an object belongs) refused. For messages that are not on a hot path.
 */
export function canonical<T>(value: T, where: Where, path: string): T {
  return copy(value, where, path, 0) as T;
}
function copy(value: unknown, where: Where, path: string, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 64) throw new ValidationError(where, path, 'nested too deeply');
  if (Array.isArray(value)) return value.map((item, i) => copy(item, where, `${path}[${i}]`, depth + 1));
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new ValidationError(where, path, 'expected a plain object');
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    if (key === '__proto__') throw new ValidationError(where, `${path}.${key}`, 'forbidden key');
    out[key] = copy(item, where, `${path}.${key}`, depth + 1);
  }
  return out;
}

/** Map keys that are safe to copy into an object (`__proto__` would set its prototype). */
export const SAFE_KEY = '^(?!__proto__$)';

/** A compiled schema. */
export interface Codec<S extends TSchema> {
  readonly schema: S;
  /** Compiled check only (no error building): for callers that only need yes/no. */
  is(value: unknown): value is Static<S>;
  /** The value itself, typed, or a ValidationError naming `where` and the failing field under `root`. */
  decode(value: unknown, root?: string): Shape<S>;
}

/**
 * The check is compiled on first use, not here: modules call `compile` at load, and a worker thread that never
 * decodes an event should not pay for compiling the event union (tens of ms per thread at start-up).
 */
/** Whose words a failure uses: the API's (`is required`, `must be >= 0`) or the wire decoders' (`missing`, `out of range`). */
export type Wording = 'api' | 'wire';
const defaultWording = (where: Where): Wording =>
  where === 'body' || where === 'query' || where === 'params' ? 'api' : 'wire';

export function compile<S extends TSchema>(
  schema: S,
  where: Where,
  root = '',
  wording: Wording = defaultWording(where),
): Codec<S> {
  let compiled: TypeCheck<S> | undefined;
  const checker = (): TypeCheck<S> => (compiled ??= TypeCompiler.Compile(schema));
  return {
    schema,
    is: (value): value is Static<S> => checker().Check(value),
    decode(value, at = root) {
      const check = checker();
      let ok: boolean;
      try {
        ok = check.Check(value);
      } catch (error) {
        // a Proxy or a throwing getter: still a ValidationError
        throw new ValidationError(
          where,
          at,
          `undecodable: ${error instanceof Error ? error.message : 'unknown error'}`,
        );
      }
      if (ok) return value as Shape<S>;
      const first = check.Errors(value).First();
      if (!first) throw new ValidationError(where, at, 'invalid');
      const rule = (first.schema as { [RULE]?: RuleWords })[RULE];
      if (rule) throw new ValidationError(where, fieldPath(at, `${first.path}${rule.pointer}`, value), rule.why);
      const leaf = inUnion(first);
      const repeat = leaf.type === ValueErrorType.ArrayUniqueItems ? repeatedItem(leaf.value) : undefined;
      if (repeat)
        throw new ValidationError(
          where,
          fieldPath(at, `${leaf.path}/${repeat.at}`, value),
          `${repeat.text} is given twice (first at [${repeat.first}])`,
        );
      throw new ValidationError(where, fieldPath(at, leaf.path, value), why(leaf, wording === 'api'));
    },
  };
}

/**
 * A rule across fields, said in JSON Schema (`not` of a combination, `anyOf` of `required`) so the OpenAPI
 * document states it and the compiled check enforces it: one schema, no copy to drift. Its failure is reported
 * as the rule (the field `path` under the checked object, `why`), not as whichever branch failed first. The
 * words are kept under a symbol, which the served JSON drops; the schema's description says the rule there.
 */
const RULE = Symbol('torus.rule');
interface RuleWords {
  readonly pointer: string;
  readonly why: string;
}
export function Rule<T extends TSchema>(schema: T, path: string, why: string): T {
  const pointer = path === '' ? '' : `/${path}`;
  return Object.assign(schema, { description: path === '' ? why : `${path} ${why}`, [RULE]: { pointer, why } });
}

/**
 * A union's error names its own field when the value picked a variant: in a discriminated union (events by
 * `type`, workloads by `kind`, replies by `ok`) the variants whose literal fields the value matches best are
 * the candidates, and the first candidate's first error is reported; when the value matches no variant's
 * discriminant, the discriminant itself (`event.type: expected one of ...`).
 */
function inUnion(error: ValueError): ValueError {
  if (error.type !== ValueErrorType.Union) return error;
  const value = error.value;
  const variants = flatVariants(error.schema);
  const literals = (v: TSchema): [string, unknown][] =>
    Object.entries((v as { properties?: Record<string, { const?: unknown }> }).properties ?? {})
      .filter(([, p]) => p.const !== undefined)
      .map(([k, p]) => [k, p.const]);
  const field = (key: string): unknown =>
    typeof value === 'object' && value !== null && Object.hasOwn(value, key)
      ? (value as Record<string, unknown>)[key]
      : undefined;
  // An optional discriminant left out picks its variant too (a workload without `kind` is a ring workload).
  const fits = (v: TSchema, key: string, c: unknown): boolean =>
    field(key) === c || (field(key) === undefined && !((v as { required?: string[] }).required ?? []).includes(key));
  const score = (v: TSchema): number => literals(v).filter(([k, c]) => fits(v, k, c)).length;
  const best = Math.max(...variants.map(score));
  const candidates = variants.filter((v) => score(v) === best);
  const withConsts = candidates.filter((v) => literals(v).length > 0);
  if (typeof value !== 'object' || value === null || Array.isArray(value) || withConsts.length === 0) {
    // Without a discriminant, the variant whose fields the value uses most (`{instance}` is the instance form).
    const keys = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
    const known = (v: TSchema): number =>
      keys.filter((k) => Object.hasOwn((v as { properties?: object }).properties ?? {}, k)).length;
    const closest = candidates.reduce((a, b) => (known(b) > known(a) ? b : a));
    const first = Errors(closest, [], value).First();
    return first ? inUnion({ ...first, path: error.path + first.path }) : error;
  }
  const chosen = candidates[0]!;
  const key = literals(chosen).find(([k, c]) => !fits(chosen, k, c))?.[0];
  if (key === undefined) {
    // the value picked this variant: its own first error
    const first = Errors(chosen, [], value).First();
    return first ? inUnion({ ...first, path: error.path + first.path }) : error;
  }
  const consts = [
    ...new Set(
      candidates
        .map((v) => literals(v).find(([k]) => k === key)?.[1])
        .filter((c) => c !== undefined)
        .map(String),
    ),
  ];
  return {
    ...error,
    type: ValueErrorType.Kind,
    path: `${error.path}/${key}`,
    value: field(key),
    schema: { ...error.schema, enum: consts },
  };
}
function flatVariants(schema: TSchema): TSchema[] {
  const anyOf = (schema as { anyOf?: TSchema[] }).anyOf;
  return anyOf ? anyOf.flatMap(flatVariants) : [schema];
}

/** The first item of a list that repeats an earlier one (compared as JSON), so the error can name it: `nodes[2]`. */
function repeatedItem(list: unknown): { at: number; first: number; text: string } | undefined {
  if (!Array.isArray(list)) return undefined;
  const seen = new Map<string, number>();
  for (const [at, item] of list.entries()) {
    const text = JSON.stringify(item) ?? String(item);
    const first = seen.get(text);
    if (first !== undefined) return { at, first, text: text.length > 80 ? `${text.slice(0, 77)}...` : text };
    seen.set(text, at);
  }
  return undefined;
}

const typeName = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** `/workload/env/A-B` → `workload.env["A-B"]`, `/nodes/1` → `nodes[1]` (walking the value to tell indices from keys). */
export function fieldPath(root: string, pointer: string, value: unknown): string {
  let path = root;
  let here: unknown = value;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(here)) path = `${path}[${key}]`;
    else path = /^[A-Za-z_$][\w$]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;
    here =
      typeof here === 'object' && here !== null && Object.hasOwn(here, key)
        ? (here as Record<string, unknown>)[key]
        : undefined;
  }
  return path;
}

/** The reason, in the words the API (`api`) or the wire decoders used before TypeBox, so callers and tests keep them. */
function why(error: ValueError, api: boolean): string {
  const s = error.schema as Record<string, unknown>;
  const v = error.value;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return api ? 'is required' : 'missing';
    case ValueErrorType.ObjectAdditionalProperties: {
      // A map whose keys follow a rule (env names): say the rule, not "unknown".
      const names = Object.keys((s.patternProperties ?? {}) as object);
      if (names.length === 1) return `does not match /${names[0]!}/ (a name of this map)`;
      return api ? 'is not a known field' : 'unknown field';
    }
    case ValueErrorType.Object:
      return `expected an object, got ${typeName(v)}`;
    case ValueErrorType.String:
      return `expected a string, got ${typeName(v)}`;
    case ValueErrorType.Boolean:
      return `expected a boolean, got ${typeName(v)}`;
    case ValueErrorType.Array:
      return `expected an array, got ${typeName(v)}`;
    case ValueErrorType.Number:
    case ValueErrorType.Integer:
      return typeof v === 'number' && Number.isFinite(v)
        ? 'expected an integer'
        : `expected a finite number, got ${typeName(v)}`;
    case ValueErrorType.StringMinLength:
      return api ? `must have at least ${String(s.minLength)} characters` : 'too short';
    case ValueErrorType.StringMaxLength:
      return api ? `must have at most ${String(s.maxLength)} characters` : 'too long';
    case ValueErrorType.StringPattern:
      return `does not match /${String(s.pattern)}/`;
    case ValueErrorType.StringFormat:
      return FORMAT_WHY[String(s.format)] ?? `not a valid ${String(s.format)}`;
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum: {
      const low = error.type === ValueErrorType.NumberMinimum || error.type === ValueErrorType.IntegerMinimum;
      if (api) return low ? `must be >= ${String(s.minimum)}` : `must be <= ${String(s.maximum)}`;
      return `out of range [${String(s.minimum ?? -Infinity)}, ${String(s.maximum ?? Infinity)}]`;
    }
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${String(s.minItems)} items`;
    case ValueErrorType.ArrayMaxItems:
      return api ? `must have at most ${String(s.maxItems)} items` : `more than ${String(s.maxItems)} items`;
    case ValueErrorType.ArrayUniqueItems:
      return 'duplicate items';
    case ValueErrorType.ObjectMaxProperties:
      return `more than ${String(s.maxProperties)} entries`;
    case ValueErrorType.Kind:
      return Array.isArray(s.enum) ? `expected one of ${s.enum.join(', ')}` : error.message;
    case ValueErrorType.Literal:
      return `expected ${JSON.stringify(s.const)}`;
    case ValueErrorType.Union:
      return `expected ${typeof s.description === 'string' ? s.description : 'one of its forms'}`;
    default:
      return error.message;
  }
}

/** `true` when `A` and `B` are the same type (each assignable to the other). */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/**
 * A compile-time proof that a hand-written interface (kept for its comments, or because a lower layer owns it)
 * equals its schema's `Shape<>`: `sameShape<Shape<typeof X>, X>()` does not compile when they drift apart.
 */
export function sameShape<A, B>(..._proof: Same<A, B> extends true ? [] : [never]): void {}

/**
 * `compile` with the wire decoders' words (`missing`, `unknown field`, `out of range [a, b]`) whatever the
 * `where`: for shapes that arrive as an HTTP body or a config file but were always read like frames (a peer's probe
 * answers, a hostfile), so their errors keep their code (`where`) and their reasons.
 */
export function compileWire<S extends TSchema>(schema: S, where: Where, root = ''): Codec<S> {
  return compile(schema, where, root, 'wire');
}

/**
 * `compile` with the API's wording ("is required", "must be >= 0", "is not a known field") whatever `where` is:
 * for inputs a person writes that are not HTTP bodies (the planner's `--state` / `--request` files).
 */
export function compileWorded<S extends TSchema>(schema: S, where: Where, root = ''): Codec<S> {
  return compile(schema, where, root, 'api');
}
