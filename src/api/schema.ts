import { ValidationError } from '../core/errors.js';

/**
 * A deliberately tiny schema language for request bodies. Hand-written because the project adds no
 * dependencies (no ajv/zod), and because one definition serves twice: `check()` validates at the edge,
 * naming the failing JSON path (STYLE rule 13), and `toJsonSchema()` renders the same definition into the
 * OpenAPI document, so the docs cannot drift from what is enforced. Objects reject unknown fields.
 */
export type Schema =
  | { readonly kind: 'string'; readonly enum?: readonly string[]; readonly minLength?: number; readonly maxLength?: number; readonly description?: string }
  | { readonly kind: 'integer' | 'number'; readonly minimum?: number; readonly maximum?: number; readonly description?: string }
  | { readonly kind: 'boolean'; readonly description?: string }
  | { readonly kind: 'array'; readonly items: Schema; readonly minItems?: number; readonly maxItems?: number; readonly description?: string }
  | {
      readonly kind: 'object';
      readonly properties: Readonly<Record<string, Schema>>;
      readonly required?: readonly string[];
      /** When set, keys are free and every value must match (a map). */
      readonly values?: Schema;
      readonly description?: string;
    };

type Where = 'body' | 'query' | 'params';

const typeName = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

const joinPath = (path: string, key: string | number): string =>
  typeof key === 'number' ? `${path}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;

/** Validates `value` against `schema`; throws a ValidationError naming `where` and the JSON path. Returns the value. */
export function check<T = unknown>(schema: Schema, value: unknown, where: Where = 'body', path = ''): T {
  const fail = (why: string): never => {
    throw new ValidationError(where, path, why);
  };
  switch (schema.kind) {
    case 'string': {
      if (typeof value !== 'string') fail(`expected a string, got ${typeName(value)}`);
      const s = value as string;
      if (schema.enum && !schema.enum.includes(s)) fail(`expected one of ${schema.enum.join(', ')}`);
      if (schema.minLength !== undefined && s.length < schema.minLength) fail(`must have at least ${schema.minLength} characters`);
      if (schema.maxLength !== undefined && s.length > schema.maxLength) fail(`must have at most ${schema.maxLength} characters`);
      break;
    }
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) fail(`expected a finite number, got ${typeName(value)}`);
      const n = value as number;
      if (schema.kind === 'integer' && !Number.isSafeInteger(n)) fail('expected an integer');
      if (schema.minimum !== undefined && n < schema.minimum) fail(`must be >= ${schema.minimum}`);
      if (schema.maximum !== undefined && n > schema.maximum) fail(`must be <= ${schema.maximum}`);
      break;
    }
    case 'boolean':
      if (typeof value !== 'boolean') fail(`expected a boolean, got ${typeName(value)}`);
      break;
    case 'array': {
      if (!Array.isArray(value)) fail(`expected an array, got ${typeName(value)}`);
      const a = value as unknown[];
      if (schema.minItems !== undefined && a.length < schema.minItems) fail(`must have at least ${schema.minItems} items`);
      if (schema.maxItems !== undefined && a.length > schema.maxItems) fail(`must have at most ${schema.maxItems} items`);
      a.forEach((item, i) => check(schema.items, item, where, joinPath(path, i)));
      break;
    }
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(`expected an object, got ${typeName(value)}`);
      const o = value as Record<string, unknown>;
      for (const key of schema.required ?? []) {
        if (!Object.hasOwn(o, key) || o[key] === undefined) throw new ValidationError(where, joinPath(path, key), 'is required');
      }
      for (const [key, item] of Object.entries(o)) {
        const sub = schema.values ?? schema.properties[key];
        if (!sub || !Object.hasOwn(schema.values ? o : schema.properties, key)) throw new ValidationError(where, joinPath(path, key), 'is not a known field');
        check(sub, item, where, joinPath(path, key));
      }
      break;
    }
    default: {
      const never: never = schema;
      throw new Error(`unknown schema ${String(never)}`);
    }
  }
  return value as T;
}

/** The same schema as JSON Schema (draft 2020-12, as OpenAPI 3.1 uses). */
export function toJsonSchema(schema: Schema): Record<string, unknown> {
  const base: Record<string, unknown> = schema.description ? { description: schema.description } : {};
  switch (schema.kind) {
    case 'string':
      return { ...base, type: 'string', ...pick(schema, ['enum', 'minLength', 'maxLength']) };
    case 'integer':
    case 'number':
      return { ...base, type: schema.kind, ...pick(schema, ['minimum', 'maximum']) };
    case 'boolean':
      return { ...base, type: 'boolean' };
    case 'array':
      return { ...base, type: 'array', items: toJsonSchema(schema.items), ...pick(schema, ['minItems', 'maxItems']) };
    case 'object':
      return schema.values
        ? { ...base, type: 'object', additionalProperties: toJsonSchema(schema.values) }
        : {
            ...base,
            type: 'object',
            properties: Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, toJsonSchema(v)])),
            ...(schema.required?.length ? { required: [...schema.required] } : {}),
            additionalProperties: false,
          };
  }
}

function pick(source: object, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const value = (source as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
