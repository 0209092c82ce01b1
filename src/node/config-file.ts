/**
 * The config file (`--config FILE`): a JSON object whose keys are the option table's config keys. Its schema is
 * built from the table, so an unknown key or a value of the wrong type is a ValidationError naming the key and
 * the file before anything starts; the values' ranges and forms are then checked by each option's parser.
 */
import { readFileSync } from 'node:fs';
import { ValidationError } from '../protocols/errors.js';
import { compile, type TSchema, Type } from '../protocols/schema-kit.js';
import type { OptionSpec } from './option-spec.js';

/** The JSON Schema of a config file for these options: every key optional, no other key. */
export function configFileSchema(table: Readonly<Record<string, OptionSpec>>) {
  const properties: Record<string, TSchema> = {};
  for (const o of Object.values(table))
    if (o.key !== undefined && o.schema !== undefined) properties[o.key] = Type.Optional(o.schema);
  return Type.Object(properties, { additionalProperties: false });
}

export function readConfigFile(path: string, table: Readonly<Record<string, OptionSpec>>): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ValidationError('config', path, `cannot read: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ValidationError('config', path, `not valid JSON: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ValidationError('config', path, 'expected a JSON object');
  const schema = configFileSchema(table);
  if (compile(schema, 'config').is(parsed)) return parsed as Record<string, unknown>;
  // Which key failed, said in the table's words rather than the schema's.
  const known = Object.keys(schema.properties);
  for (const [key, value] of Object.entries(parsed)) {
    const property = schema.properties[key];
    if (property === undefined)
      throw new ValidationError('config', key, `unknown option in ${path}; known: ${known.join(', ')}`);
    if (!compile(property, 'config').is(value)) {
      const o = Object.values(table).find((e) => e.key === key);
      throw new ValidationError('config', key, `expected ${o?.expects}, got ${JSON.stringify(value)} in ${path}`);
    }
  }
  throw new ValidationError('config', path, 'does not match the config file schema');
}
