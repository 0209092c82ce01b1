/**
 * Structured, quiet-by-default logging: one JSON object per line on stderr.
 * Level comes from `--log-level` (via setLogLevel) or TORUS_LOG_LEVEL; default `warn` so a healthy node is silent.
 */
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
let sink: Sink = (line) => process.stderr.write(line + '\n');

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

function serialise(value: unknown): unknown {
  if (value instanceof Error) {
    const withCode = value as Error & { code?: unknown; details?: unknown };
    return { name: value.name, message: value.message, code: withCode.code, details: withCode.details };
  }
  if (typeof value === 'bigint') return value.toString();
  return value;
}

export function createLogger(base: Record<string, unknown> = {}): Logger {
  const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (rank(level) < rank(threshold)) return;
    const record: Record<string, unknown> = { t: new Date().toISOString(), level, msg, ...base };
    if (fields) for (const [k, v] of Object.entries(fields)) record[k] = serialise(v);
    sink(JSON.stringify(record));
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    child: (fields) => createLogger({ ...base, ...fields }),
  };
}
