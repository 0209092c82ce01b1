/** Parsers for option values shared by the node's configuration blocks (config.ts and its per-area files). */
import { ValidationError } from '../protocols/errors.js';

/** Where an option's value came from: `pick(flag, key)` in config.ts. */
export interface PickedValue {
  readonly value: unknown;
  readonly where: 'flag' | 'config';
  readonly path: string;
}

export type Pick = (flag: string, key: string) => PickedValue;

/** A whole number from `min` to `max` (a number, or a string of digits); `fallback` when the option is absent. */
export function wholeNumber(p: PickedValue, fallback: number, min: number, max: number): number {
  if (p.value === undefined) return fallback;
  const n =
    typeof p.value === 'number'
      ? p.value
      : typeof p.value === 'string' && /^\d+$/.test(p.value)
        ? Number(p.value)
        : NaN;
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ValidationError(
      p.where,
      p.path,
      `expected a whole number from ${min} to ${max}, got ${JSON.stringify(p.value)}`,
    );
  return n;
}
