/**
 * Structured, quiet-by-default logging: one JSON object per line on stderr.
 * Level comes from `--log-level` (via setLogLevel) or TORUS_LOG_LEVEL; default `warn` so a healthy node is silent.
 */
import { toLogValue } from './log-value.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const rank = (level: LogLevel): number => LOG_LEVELS.indexOf(level);

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

let threshold: LogLevel = isLogLevel(process.env.TORUS_LOG_LEVEL) ? process.env.TORUS_LOG_LEVEL : 'warn';
type Sink = (line: string) => void;
let sink: Sink = (line) => process.stderr.write(`${line}\n`);

export function setLogLevel(level: LogLevel): void {
  threshold = level;
  // Worker threads and child processes read the environment at start: keep them in step.
  process.env.TORUS_LOG_LEVEL = level;
}

export function getLogLevel(): LogLevel {
  return threshold;
}

/** Redirects log lines (tests capture them; workers may forward them). */
export function setLogSink(next: Sink): void {
  sink = next;
}

/**
 * One JSON line; never throws. Values go through toLogValue (BigInt, cycles, nested errors with stack and
 * cause, throwing getters), each within the size bounds, so the line is always valid JSON.
 */
export function formatRecord(
  level: LogLevel,
  msg: unknown,
  base: Record<string, unknown>,
  fields?: Record<string, unknown>,
): string {
  const record: Record<string, unknown> = {
    t: new Date().toISOString(),
    level,
    msg: typeof msg === 'string' ? msg : toLogValue(msg),
  };
  for (const source of [base, fields]) {
    if (!source) continue;
    let keys: string[];
    try {
      keys = Object.keys(source);
    } catch (error) {
      record.logFieldsError = toLogValue(error);
      continue;
    }
    for (const key of keys) {
      if (key === 't' || key === 'level' || key === 'msg') continue; // the line's own keys are not overwritten
      const value = toLogValue(
        (() => {
          try {
            return source[key];
          } catch (error) {
            return `[Thrown: ${error instanceof Error ? error.message : String(error)}]`;
          }
        })(),
      );
      record[key] = value;
    }
  }
  try {
    return JSON.stringify(record);
  } catch {
    return JSON.stringify({ t: record.t, level, msg: String(record.msg), logError: 'a field could not be written' });
  }
}

/** base + fields without invoking a getter that could throw: values are read (safely) when a line is written. */
function mergeFields(base: Record<string, unknown>, fields: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  try {
    for (const key of Object.keys(fields)) {
      const descriptor = Object.getOwnPropertyDescriptor(fields, key);
      if (descriptor) Object.defineProperty(merged, key, { ...descriptor, configurable: true, enumerable: true });
    }
  } catch (error) {
    merged.logFieldsError = toLogValue(error);
  }
  return merged;
}

export function createLogger(base: Record<string, unknown> = {}): Logger {
  const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (rank(level) < rank(threshold)) return;
    sink(formatRecord(level, msg, base, fields));
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    child: (fields) => createLogger(mergeFields(base, fields)),
  };
}
