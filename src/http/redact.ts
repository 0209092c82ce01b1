/**
 * `env` values of workloads never leave the node through the API (they hold tokens and passwords). Wherever a
 * workload appears in an answer (instance views, /v1/state, /v1/events), its env keeps its names and every value
 * becomes "[redacted]": the shape stays the same everywhere, and a reader still sees which variables are set.
 * The replicated state itself is untouched (runners need the values; the digest is over the real state).
 */
export const REDACTED = '[redacted]';

type Json = unknown;

/** A copy of `value` with every `workload.env` value replaced; unchanged subtrees are shared, not copied. */
export function redactEnv<T>(value: T): T {
  return walk(value, 0) as T;
}

/** Deep enough for any state or event; bounded so a pathological value cannot exhaust the stack. */
const MAX_DEPTH = 64;

function walk(value: Json, depth: number): Json {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const next = walk(item, depth + 1);
      if (next !== item) changed = true;
      return next;
    });
    return changed ? out : value;
  }
  const record = value as Record<string, Json>;
  let out: Record<string, Json> | undefined;
  for (const [key, item] of Object.entries(record)) {
    const next = key === 'workload' ? redactWorkload(walk(item, depth + 1)) : walk(item, depth + 1);
    if (next !== item) (out ??= { ...record })[key] = next;
  }
  return out ?? value;
}

function redactWorkload(workload: Json): Json {
  if (workload === null || typeof workload !== 'object' || Array.isArray(workload)) return workload;
  const env = (workload as { env?: unknown }).env;
  if (env === null || typeof env !== 'object' || Array.isArray(env)) return workload;
  const names = Object.keys(env);
  if (names.length === 0) return workload;
  return { ...workload, env: Object.fromEntries(names.map((name) => [name, REDACTED])) };
}
