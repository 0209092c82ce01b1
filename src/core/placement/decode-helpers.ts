import { ValidationError } from '../errors.js';

/** Where a placement input came from: an API body, or a file/flag given to the offline command. */
export type InputWhere = 'body' | 'config';

/** Small strict readers shared by the state and request decoders; every failure names the JSON path. */
export class Reader {
  constructor(readonly where: InputWhere) {}

  fail(path: string, why: string): never {
    throw new ValidationError(this.where, path, why);
  }

  object(value: unknown, path: string, allowed: readonly string[]): Record<string, unknown> {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) this.fail(path, 'must be an object');
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!allowed.includes(key)) this.fail(`${path}.${key}`, `unknown field (allowed: ${allowed.join(', ')})`);
    }
    return record;
  }

  /** An object with free-form keys (e.g. workload id → fraction). */
  record(value: unknown, path: string): Record<string, unknown> {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) this.fail(path, 'must be an object');
    return value as Record<string, unknown>;
  }

  array(value: unknown, path: string): unknown[] {
    if (!Array.isArray(value)) this.fail(path, 'must be an array');
    return value;
  }

  string(value: unknown, path: string): string {
    if (typeof value !== 'string' || value.length === 0) this.fail(path, 'must be a non-empty string');
    return value;
  }

  number(value: unknown, path: string, opts: { min?: number; max?: number; integer?: boolean } = {}): number {
    if (typeof value !== 'number' || !Number.isFinite(value)) this.fail(path, 'must be a finite number');
    if (opts.integer === true && !Number.isInteger(value)) this.fail(path, 'must be an integer');
    if (opts.min !== undefined && value < opts.min) this.fail(path, `must be >= ${opts.min}`);
    if (opts.max !== undefined && value > opts.max) this.fail(path, `must be <= ${opts.max}`);
    return value;
  }

  boolean(value: unknown, path: string): boolean {
    if (typeof value !== 'boolean') this.fail(path, 'must be true or false');
    return value;
  }

  oneOf<T extends string>(value: unknown, path: string, options: readonly T[]): T {
    if (typeof value !== 'string' || !(options as readonly string[]).includes(value)) {
      this.fail(path, `must be one of ${options.map((o) => JSON.stringify(o)).join(', ')}`);
    }
    return value as T;
  }
}
