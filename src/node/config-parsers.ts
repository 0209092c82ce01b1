/**
 * The dedicated parsers of options whose values are more than a string, a number or a switch: peers, interface
 * types, ports, sizes, secrets read from files, the exec policy. The option table refers to them.
 */
import { readFileSync } from 'node:fs';
import { ValidationError } from '../protocols/errors.js';
import { parseExecPolicy, type ExecPolicy } from '../protocols/exec-policy.js';
import { INTERFACE_TYPES, type InterfaceType } from '../protocols/interface-types.js';
import { commaList } from '../protocols/comma-list.js';

type Where = 'flag' | 'config';

/**
 * The default heap budget of each actor thread: 20x what an actor holds today (10-25 MiB), so reaching it means a
 * runaway thread, which is then restarted instead of taking the machine's memory. A limit under 2 GiB also lowers
 * how far V8 lets a large heap commit beyond its live objects (up to 4x at V8's default limit, which follows the
 * machine's memory).
 */
export const DEFAULT_ACTOR_HEAP_MB = 512;
/** Below this an actor would spend its time collecting, or fail to start. */
export const MIN_ACTOR_HEAP_MB = 64;

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

export function parsePort(value: unknown, where: Where, path: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new ValidationError(where, path, `expected a port number 0-65535, got ${JSON.stringify(value)}`);
  return n;
}

export function parsePeers(value: unknown, where: Where, path: string): string[] {
  const list = commaList(value);
  if (!list) throw new ValidationError(where, path, 'expected host:port entries');
  return list.map((entry, i) => {
    const m = typeof entry === 'string' ? HOST_PORT.exec(entry) : null;
    if (!m) throw new ValidationError(where, `${path}[${i}]`, `expected host:port, got ${JSON.stringify(entry)}`);
    parsePort(m[2], where, `${path}[${i}]`);
    return entry as string;
  });
}

export function parseIfaceTypes(value: unknown, where: Where, path: string): Record<string, InterfaceType> {
  const out: Record<string, InterfaceType> = {};
  const entries: Array<[string, unknown]> = Array.isArray(value)
    ? value.map((item, i) => {
        const m = typeof item === 'string' ? /^([^=\s]+)=(\S+)$/.exec(item) : null;
        if (!m) throw new ValidationError(where, `${path}[${i}]`, `expected NAME=TYPE, got ${JSON.stringify(item)}`);
        return [m[1]!, m[2]];
      })
    : value && typeof value === 'object'
      ? Object.entries(value)
      : [];
  if (!Array.isArray(value) && (typeof value !== 'object' || value === null))
    throw new ValidationError(where, path, 'expected NAME=TYPE entries');
  for (const [name, type] of entries) {
    if (!(INTERFACE_TYPES as readonly unknown[]).includes(type)) {
      throw new ValidationError(
        where,
        `${path}.${name}`,
        `unknown interface type ${JSON.stringify(type)}; expected one of ${INTERFACE_TYPES.join(', ')}`,
      );
    }
    out[name] = type as InterfaceType;
  }
  return out;
}

const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kib|mib|gib|tib|kb|mb|gb|tb)?$/i;
const SIZE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
};

/** `24GiB`, `512MiB`, `8GB`, or bytes → bytes; at least 1 MiB (a smaller figure is a typo, not a node). */
export function parseMemorySize(value: unknown, where: Where, path: string): number {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  const m = SIZE.exec(text);
  const bytes = m ? Math.round(Number(m[1]) * (SIZE_UNITS[(m[2] ?? 'b').toLowerCase()] ?? 1)) : Number.NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 2 ** 20)
    throw new ValidationError(where, path, 'expected a size of at least 1MiB, like 24GiB, 512MiB or bytes');
  return bytes;
}

/** `--actor-heap`: a size (whole MiB, at least MIN_ACTOR_HEAP_MB), or `off` (undefined: V8's default limit). */
export function parseActorHeap(value: unknown, where: Where, path: string): number | undefined {
  if (value === undefined) return DEFAULT_ACTOR_HEAP_MB;
  if (value === 'off' || value === false) return undefined;
  const why = `expected a size of at least ${MIN_ACTOR_HEAP_MB}MiB (like 512MiB or 1GiB) or off`;
  let bytes: number;
  try {
    bytes = parseMemorySize(value, where, path);
  } catch {
    throw new ValidationError(where, path, why);
  }
  const mb = Math.floor(bytes / 2 ** 20);
  if (mb < MIN_ACTOR_HEAP_MB || mb > 1 << 20) throw new ValidationError(where, path, why);
  return mb;
}

export function readSecretFile(path: string, where: Where, key: string, what = 'secret'): string {
  let secret: string;
  try {
    secret = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new ValidationError(where, key, `cannot read ${what} file ${path}: ${(error as Error).message}`);
  }
  if (!secret) throw new ValidationError(where, key, `${what} file ${path} is empty`);
  if (secret.length > 1024 || /\s/.test(secret))
    throw new ValidationError(
      where,
      key,
      `${what} file ${path} must hold one line without spaces (at most 1024 characters)`,
    );
  return secret;
}

/** `--allow-exec` alone stands for `*` (parse-options.ts): every command. */
const ALLOW_ALL = '*';

export function execPolicyOf(value: unknown, where: Where, path: string): ExecPolicy {
  if (value === undefined) return false;
  if (value === ALLOW_ALL && where === 'flag') return true;
  try {
    return parseExecPolicy(value);
  } catch (error) {
    throw new ValidationError(where, path, (error as Error).message);
  }
}
