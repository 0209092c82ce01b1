import type { Codec, TSchema, Shape } from '../protocols/schema-kit.js';

/**
 * A query string read through its schema: each known parameter's first value, integers read from their decimal
 * digits (anything else stays a string, so the check names it: `query rank: expected a finite number, got string`).
 */
export function decodeQuery<S extends TSchema>(codec: Codec<S>, params: URLSearchParams): Shape<S> {
  const properties = (codec.schema as { properties?: Record<string, { type?: string }> }).properties ?? {};
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const text = params.get(name);
    if (text === null) continue;
    values[name] = schema.type === 'integer' && /^-?\d{1,16}$/.test(text) ? Number(text) : text;
  }
  return codec.decode(values);
}

/** A query schema as OpenAPI parameters (`in: query`), each with its own schema and description. */
export function queryParameters(schema: TSchema): Record<string, unknown>[] {
  const { properties = {}, required = [] } = schema as {
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: 'query',
      required: required.includes(name),
      schema: rest,
      ...(typeof description === 'string' ? { description } : {}),
    };
  });
}
