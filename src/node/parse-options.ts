/**
 * Reads an option table's values: flags (node:util parseArgs, its options made from the table), then the config
 * file, then environment variables (flags win), each checked by its entry's parser.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ValidationError } from '../protocols/errors.js';
import { readConfigFile } from './config-file.js';
import type { PickedValue } from './config-values.js';
import type { OptionSpec } from './option-spec.js';

export type OptionTable = Readonly<Record<string, OptionSpec>>;
export type OptionValues<T extends OptionTable> = { readonly [K in keyof T]: ReturnType<T[K]['parse']> };

/** The parseArgs options of a table: values are strings (checked by the entry), switches booleans. */
export function parseArgsOptions(table: OptionTable): NonNullable<ParseArgsConfig['options']> {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const o of Object.values(table)) {
    options[o.flag] = {
      type: o.arg === undefined ? 'boolean' : 'string',
      ...(o.short ? { short: o.short } : {}),
      ...(o.multiple ? { multiple: true } : {}),
    };
  }
  return options;
}

/** A flag whose value is optional (`--allow-exec[=CMD,...]`): alone it stands for `*`, as parseArgs needs a value. */
export const ALL = '*';
function withOptionalValues(table: OptionTable, args: readonly string[]): string[] {
  const optional = new Set(
    Object.values(table)
      .filter((o) => o.arg?.startsWith('[='))
      .map((o) => `--${o.flag}`),
  );
  return args.map((a) => (optional.has(a) ? `${a}=${ALL}` : a));
}

/** The table's values from `args`, the file `--config` names (the entry called `config`) and `env`. */
export function readOptions<T extends OptionTable>(
  table: T,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): OptionValues<T> {
  let flags: Record<string, unknown>;
  try {
    ({ values: flags } = parseArgs({
      args: withOptionalValues(table, args),
      options: parseArgsOptions(table),
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new ValidationError('flag', '', (error as Error).message);
  }
  const configPath = flags.config;
  const file = typeof configPath === 'string' ? readConfigFile(configPath, table) : {};
  const out: Record<string, unknown> = {};
  for (const [name, o] of Object.entries(table)) {
    const envValue = o.env === undefined || env[o.env] === '' ? undefined : env[o.env];
    const fromFlag: PickedValue | undefined =
      flags[o.flag] === undefined ? undefined : { value: flags[o.flag], where: 'flag', path: `--${o.flag}` };
    const fromFile: PickedValue | undefined =
      o.key === undefined || file[o.key] === undefined
        ? undefined
        : { value: file[o.key], where: 'config', path: o.key };
    const fromEnv: PickedValue | undefined =
      envValue === undefined ? undefined : { value: envValue, where: 'flag', path: o.env ?? '' };
    const picked = fromFlag ??
      (o.envBeforeConfig ? (fromEnv ?? fromFile) : (fromFile ?? fromEnv)) ?? {
        value: undefined,
        where: 'config',
        path: o.key ?? `--${o.flag}`,
      };
    out[name] = o.parse(picked);
  }
  return out as OptionValues<T>;
}
