/** Parsers for option values shared by every option in the table (option-table.ts and its per-area files). */
import { ValidationError } from '../protocols/errors.js';

/** Where an option's value came from: the flag, the config file, or an environment variable (named as a flag). */
export interface PickedValue {
  readonly value: unknown;
  readonly where: 'flag' | 'config';
  readonly path: string;
}

/** A number's allowed range, and how a wrong value is told (`expected <text>`). */
export interface Bounds {
  readonly min: number;
  readonly max: number;
  /** Whole numbers only (strings of digits, or JSON integers). */
  readonly integer: boolean;
  /** `min` itself is refused (a figure above 0). */
  readonly exclusiveMin?: boolean;
  readonly text: string;
}

/** Whole numbers from `min` to `max`, told as `a whole number from min to max` unless `text` says otherwise. */
export const whole = (min: number, max: number, text = `a whole number from ${min} to ${max}`): Bounds => ({
  min,
  max,
  integer: true,
  text,
});

const DIGITS = /^\d+$/;
const DECIMAL = /^\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** The one range check: a number within `b` (a number, or a string of digits); `fallback` when absent. */
export function inRange<F>(p: PickedValue, fallback: F, b: Bounds): number | F {
  if (p.value === undefined) return fallback;
  const text = typeof p.value === 'string' ? p.value.trim() : '';
  const n =
    typeof p.value === 'number' ? p.value : (b.integer ? DIGITS : DECIMAL).test(text) ? Number(text) : Number.NaN;
  const ok =
    Number.isFinite(n) &&
    (!b.integer || Number.isInteger(n)) &&
    (b.exclusiveMin ? n > b.min : n >= b.min) &&
    n <= b.max;
  if (!ok) throw new ValidationError(p.where, p.path, `expected ${b.text}, got ${JSON.stringify(p.value)}`);
  return n;
}

/** A whole number from `min` to `max`; `fallback` when the option is absent. */
export const wholeNumber = (p: PickedValue, fallback: number, min: number, max: number): number =>
  inRange(p, fallback, whole(min, max));
