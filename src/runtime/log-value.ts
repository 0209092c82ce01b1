/**
 * Turns any value into plain JSON data for one log line, and never throws: a log call must not be the thing
 * that crashes a node while it reports another failure. Errors keep name, message, code, details, stack and
 * their `cause` chain (and AggregateError's `errors`); BigInt becomes a decimal string; cycles become
 * "[Circular]"; Maps, Sets, Buffers and typed arrays are summarised; getters and proxies that throw become
 * "[Thrown: ...]". Depth, entries per container and total string size are bounded so one huge object cannot
 * flood stderr.
 */
export interface LogValueLimits {
  /** Nesting below this depth is replaced by a short tag like "[Object]". */
  readonly maxDepth: number;
  /** Object keys, array items, Map/Set entries kept per container; the rest are counted. */
  readonly maxEntries: number;
  /** Longest single string kept (longer ones are cut with a note of what was dropped). */
  readonly maxString: number;
  /** Characters of strings kept over the whole value; past it strings are cut to fit. */
  readonly maxTotalChars: number;
  /** Bytes shown (hex) of a Buffer, ArrayBuffer or DataView; typed arrays show maxEntries numbers. */
  readonly maxBytesShown: number;
}

export const DEFAULT_LOG_LIMITS: LogValueLimits = {
  maxDepth: 8,
  maxEntries: 100,
  maxString: 8192,
  maxTotalChars: 64 * 1024,
  maxBytesShown: 64,
};

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const describe = (error: unknown): string => {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    return 'unprintable';
  }
};

export function toLogValue(value: unknown, limits: LogValueLimits = DEFAULT_LOG_LIMITS): Json {
  let charsLeft = limits.maxTotalChars;
  const ancestors = new Set<object>();

  const text = (s: string): string => {
    const keep = Math.max(0, Math.min(limits.maxString, charsLeft));
    const out = s.length > keep ? `${s.slice(0, keep)}…(+${s.length - keep} chars)` : s;
    charsLeft -= Math.min(s.length, keep);
    return out;
  };

  /** Reads one property; a throwing getter is reported in place of its value. */
  const read = (obj: object, key: PropertyKey): unknown => {
    try {
      return (obj as Record<PropertyKey, unknown>)[key];
    } catch (error) {
      return `[Thrown: ${describe(error)}]`;
    }
  };

  const bytes = (view: Uint8Array, label: string): string => {
    const shown = view.subarray(0, limits.maxBytesShown);
    const hex = Array.from(shown, (b) => b.toString(16).padStart(2, '0')).join('');
    return `[${label}(${view.byteLength}) ${hex}${view.byteLength > shown.byteLength ? '…' : ''}]`;
  };

  const list = (items: Iterable<unknown>, size: number, depth: number): Json[] => {
    const out: Json[] = [];
    for (const item of items) {
      if (out.length === limits.maxEntries) break;
      out.push(walk(item, depth + 1));
    }
    if (size > out.length) out.push(`… ${size - out.length} more`);
    return out;
  };

  const entriesOf = (
    obj: object,
    keys: readonly PropertyKey[],
    depth: number,
    into: { [key: string]: Json } = {},
  ): { [key: string]: Json } => {
    let kept = 0;
    for (const key of keys) {
      if (kept === limits.maxEntries) {
        into['…'] = `${keys.length - kept} more keys`;
        break;
      }
      const v = read(obj, key);
      if (v === undefined || typeof v === 'function') continue; // as JSON.stringify does
      into[String(key)] = walk(v, depth + 1);
      kept++;
    }
    return into;
  };

  const error = (e: Error, depth: number): { [key: string]: Json } => {
    const out: { [key: string]: Json } = {
      name: text(String(read(e, 'name'))),
      message: text(String(read(e, 'message'))),
    };
    // Own enumerable fields first (TorusError's code and details, a system error's errno/syscall/path...).
    entriesOf(
      e,
      Object.keys(e).filter((k) => k !== 'cause' && k !== 'errors'),
      depth,
      out,
    );
    const stack = read(e, 'stack');
    if (typeof stack === 'string') out.stack = text(stack);
    if ('cause' in e) out.cause = walk(read(e, 'cause'), depth + 1);
    const errors = read(e, 'errors');
    if (Array.isArray(errors)) out.errors = list(errors, errors.length, depth);
    return out;
  };

  const walk = (v: unknown, depth: number): Json => {
    try {
      switch (typeof v) {
        case 'string':
          return text(v);
        case 'number':
          return Number.isFinite(v) ? v : String(v);
        case 'boolean':
          return v;
        case 'bigint':
          return v.toString();
        case 'undefined':
          return null;
        case 'symbol':
          return text(v.toString());
        case 'function':
          return `[Function ${v.name || 'anonymous'}]`;
      }
      if (v === null) return null;
      const obj = v as object;
      if (ancestors.has(obj)) return '[Circular]';
      if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? 'Invalid Date' : obj.toISOString();
      if (obj instanceof RegExp || obj instanceof URL) return text(String(obj));
      if (Buffer.isBuffer(obj)) return bytes(obj, 'Buffer');
      if (obj instanceof ArrayBuffer || obj instanceof SharedArrayBuffer)
        return bytes(new Uint8Array(obj), obj.constructor.name);
      if (obj instanceof DataView) return bytes(new Uint8Array(obj.buffer, obj.byteOffset, obj.byteLength), 'DataView');
      const tag =
        obj instanceof Error
          ? 'Error'
          : Array.isArray(obj)
            ? `Array(${obj.length})`
            : obj instanceof Map
              ? `Map(${obj.size})`
              : obj instanceof Set
                ? `Set(${obj.size})`
                : 'Object';
      if (depth >= limits.maxDepth) return `[${tag}]`;
      ancestors.add(obj);
      try {
        if (ArrayBuffer.isView(obj)) {
          const typed = obj as unknown as ArrayLike<number | bigint>;
          return {
            type: obj.constructor.name,
            length: typed.length,
            values: list(
              Array.from({ length: Math.min(typed.length, limits.maxEntries) }, (_, i) => typed[i]),
              typed.length,
              depth,
            ),
          };
        }
        if (obj instanceof Error) return error(obj, depth);
        if (Array.isArray(obj)) return list(obj, obj.length, depth);
        if (obj instanceof Map) return { type: 'Map', size: obj.size, entries: list(obj.entries(), obj.size, depth) };
        if (obj instanceof Set) return { type: 'Set', size: obj.size, values: list(obj, obj.size, depth) };
        const toJSON = read(obj, 'toJSON');
        if (typeof toJSON === 'function') return walk(toJSON.call(obj), depth + 1);
        return entriesOf(obj, Object.keys(obj), depth);
      } finally {
        ancestors.delete(obj);
      }
    } catch (error) {
      // A Proxy whose traps throw, an exotic host object: say so rather than fail the log call.
      return `[Unserializable: ${describe(error)}]`;
    }
  };

  return walk(value, 0);
}
