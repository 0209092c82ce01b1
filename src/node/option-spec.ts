/**
 * What one entry of the option table says about an option, and builders for the common kinds. Everything else is
 * made from the entries: the parseArgs options, the `--help` text, the config-file schema and the README table.
 */
import { ValidationError } from '../protocols/errors.js';
import { Type, type TSchema } from '../protocols/schema-kit.js';
import { type Bounds, inRange, type PickedValue } from './config-values.js';

export interface OptionSpec<T = unknown> {
  /** The flag, without `--`. */
  readonly flag: string;
  readonly short?: string;
  /** The config-file key; absent: the option is a flag only. */
  readonly key?: string;
  /** The environment variable read when neither the flag nor the config file sets it. */
  readonly env?: string;
  /** The environment variable beats the config file (the secret: a deployment's env overrides a shared file). */
  readonly envBeforeConfig?: boolean;
  /** The value's placeholder in the help (`N`, `FILE`); absent: a boolean flag. */
  readonly arg?: string;
  /** The flag may be repeated. */
  readonly multiple?: boolean;
  /** The JSON types the config-file key accepts (part of the config file's schema). */
  readonly schema?: TSchema;
  /** What a wrong config-file value is told it should be. */
  readonly expects: string;
  /** The default, as the help and the README show it. */
  readonly default: string;
  readonly bounds?: Bounds;
  /** One line of help (wrapped by the help and the README). */
  readonly help: string;
  /** The value from the flag, the file or the environment, checked; `p.value` is undefined when none sets it. */
  readonly parse: (p: PickedValue) => T;
  /** A valid value other than the default, as a flag and in a config file (the table-driven test uses it). */
  readonly example?: readonly [flag: string | true, config: unknown];
}

/** The option's own value, for options whose check spans several (the secret, TLS files). */
export const raw = (p: PickedValue): PickedValue => p;

export function nonEmpty(value: unknown, where: 'flag' | 'config', path: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 256)
    throw new ValidationError(where, path, 'expected a non-empty string');
  return value;
}

type Common = Pick<OptionSpec, 'flag' | 'key' | 'env' | 'help' | 'example' | 'short'>;

/** A number within `bounds` (a number, or a string of digits); `fallback` when absent. */
export function bounded<F extends number | undefined>(
  o: Common & { readonly bounds: Bounds; readonly fallback: F; readonly arg?: string; readonly default?: string },
): OptionSpec<number | F> {
  const b = o.bounds;
  const num = b.integer
    ? Type.Integer({ minimum: b.min, maximum: b.max })
    : b.exclusiveMin
      ? Type.Number({ exclusiveMinimum: b.min, maximum: b.max })
      : Type.Number({ minimum: b.min, maximum: b.max });
  return {
    ...o,
    arg: o.arg ?? 'N',
    schema: Type.Union([num, Type.String()]),
    expects: b.text,
    default: o.default ?? String(o.fallback),
    parse: (p) => inRange(p, o.fallback, b),
  };
}

/** A non-empty string; `fallback` when absent. */
export function text<F extends string | undefined>(
  o: Common & { readonly arg: string; readonly fallback: F; readonly default?: string },
): OptionSpec<string | F> {
  return {
    ...o,
    schema: Type.String(),
    expects: 'a non-empty string',
    default: o.default ?? String(o.fallback),
    parse: (p) => (p.value === undefined ? o.fallback : nonEmpty(p.value, p.where, p.path)),
  };
}

/** A flag that turns something on; `true` or `false` in the config file. */
export function flag(o: Common & { readonly default?: string }): OptionSpec<boolean> {
  return {
    ...o,
    schema: Type.Boolean(),
    expects: 'true or false',
    default: o.default ?? 'off',
    parse: (p) => p.value === true,
  };
}
