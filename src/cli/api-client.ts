/**
 * Shared plumbing of the CLI clients (status, place, instances, delete, peers, bench ring --live): flag
 * parsing with `--api URL` and `--json`, a small JSON client that turns the API's `{"error":…}` bodies back
 * into TorusErrors, and output helpers. Every request carries the API token found by `findApiToken`. Exit codes: 0 ok, 1 the node refused or failed, 2 usage error.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { TorusError, asTorusError, errorFromJson } from '../core/errors.js';
import { API_TOKEN_FILE, readApiTokenIn } from '../node/credentials.js';

/** The node's default API port (the same as `torus start`'s default --port). */
export const DEFAULT_API_PORT = 52_515;
export const DEFAULT_API_URL = `http://127.0.0.1:${DEFAULT_API_PORT}`;

export interface CliIo {
  readonly stdout: { write(chunk: string): unknown; isTTY?: boolean };
  readonly stderr: { write(chunk: string): unknown; isTTY?: boolean };
}

export const processIo: CliIo = { stdout: process.stdout, stderr: process.stderr };

export class UsageError extends TorusError {
  constructor(message: string) {
    super('TORUS_CONFIG_INVALID', message, { where: 'flag' });
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;
const COMMON = {
  api: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
  token: { type: 'string' }, 'data-dir': { type: 'string' },
} as const satisfies Options;

/** The API token to send, and where the CLI looked (said when the node answers 401). */
export interface ApiToken {
  readonly token: string | undefined;
  /** e.g. ['--token (not given)', 'TORUS_TOKEN (not set)', '/home/me/.torus/api-token (found)'] */
  readonly lookedIn: readonly string[];
}

/**
 * The token lookup every client command shares: `--token`, then env TORUS_TOKEN, then `<data-dir>/api-token` (the
 * file a node on this machine saves), where the data dir is `--data-dir`, env TORUS_DATA_DIR, else ~/.torus.
 */
export function findApiToken(flags: { token?: unknown; dataDir?: unknown }, env: NodeJS.ProcessEnv = process.env): ApiToken {
  const lookedIn: string[] = [];
  if (typeof flags.token === 'string' && flags.token !== '') return { token: flags.token, lookedIn: ['--token'] };
  lookedIn.push('--token (not given)');
  if (env.TORUS_TOKEN) return { token: env.TORUS_TOKEN, lookedIn: [...lookedIn, 'TORUS_TOKEN'] };
  lookedIn.push('TORUS_TOKEN (not set)');
  const dataDir = typeof flags.dataDir === 'string' && flags.dataDir !== '' ? flags.dataDir : env.TORUS_DATA_DIR || join(homedir(), '.torus');
  const file = join(dataDir, API_TOKEN_FILE);
  const token = readApiTokenIn(dataDir);
  return { token, lookedIn: [...lookedIn, `${file} (${token ? 'found' : 'none there'})`] };
}

export interface ParsedCli<V> {
  readonly values: V & { api?: string; json?: boolean; help?: boolean };
  readonly positionals: string[];
  readonly client: ApiClient;
}

export function parseCli<O extends Options>(args: readonly string[], options: O, maxPositionals = 0): ParsedCli<Record<keyof O, unknown>> {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...args], options: { ...COMMON, ...options } as Options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.positionals.length > maxPositionals) throw new UsageError(`unexpected argument ${parsed.positionals[maxPositionals]}`);
  const api = (parsed.values.api as string | undefined) ?? process.env.TORUS_API ?? DEFAULT_API_URL;
  try {
    new URL(api);
  } catch {
    throw new UsageError(`--api: not a URL: ${api}`);
  }
  const token = findApiToken({ token: parsed.values.token, dataDir: parsed.values['data-dir'] });
  return { values: parsed.values as unknown as ParsedCli<Record<keyof O, unknown>>['values'], positionals: parsed.positionals, client: new ApiClient(api, token) };
}

export class ApiClient {
  constructor(readonly base: string, readonly token: ApiToken = { token: undefined, lookedIn: [] }) {}

  /** The Authorization header (empty without a token: the node then answers 401, explained below). */
  get authHeaders(): Record<string, string> {
    return this.token.token ? { authorization: `Bearer ${this.token.token}` } : {};
  }

  url(path: string): string {
    return new URL(path, this.base.endsWith('/') ? this.base : `${this.base}/`).href.replace(/([^:])\/\/+/g, '$1/');
  }

  async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.url(path), {
        method,
        headers: { ...this.authHeaders, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? null : JSON.stringify(body),
      });
    } catch (error) {
      const inner = (error as { cause?: { code?: string; message?: string } }).cause;
      const cause = inner?.code ?? inner?.message ?? (error as Error).message;
      throw new TorusError('TORUS_API_UNREACHABLE', `cannot reach the node API at ${this.base} (${cause}); is \`torus start\` running? (--api URL)`, { api: this.base });
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      throw new TorusError('TORUS_API_UNREACHABLE', `${this.base} answered HTTP ${res.status} with non-JSON`, { api: this.base });
    }
    if (res.status === 401) throw this.unauthenticated();
    if (!res.ok) throw errorFromJson((json as { error?: unknown } | undefined)?.error);
    return json as T;
  }

  /** A 401 explained: whether a token was sent, and every place the CLI looked for one. */
  unauthenticated(): TorusError {
    const sent = this.token.token ? 'refused the API token' : 'needs an API token and none was found';
    return new TorusError('TORUS_UNAUTHENTICATED',
      `the node at ${this.base} ${sent}. Looked in: ${this.token.lookedIn.join(', ')}. `
      + 'On the node\'s machine `node dist/main.js token --api` prints it; pass it with --token or TORUS_TOKEN (or --data-dir DIR for a node started with --data-dir).',
      { api: this.base, lookedIn: this.token.lookedIn });
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }
}

/** Runs a command body with the common error handling: usage → 2, API/transport failures → 1. */
export async function runCli(io: CliIo, usage: string, args: readonly string[], json: boolean, body: () => Promise<number>): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(usage);
    return 0;
  }
  try {
    return await body();
  } catch (error) {
    const e = asTorusError(error);
    if (e instanceof UsageError) {
      io.stderr.write(`${e.message}\n${usage}`);
      return 2;
    }
    if (json) io.stdout.write(JSON.stringify({ error: e.toJSON() }) + '\n');
    else io.stderr.write(`error: ${e.message}${e.code === 'TORUS_API_UNREACHABLE' ? '' : ` (${e.code})`}\n${detailLines(e)}`);
    return 1;
  }
}

function detailLines(e: TorusError): string {
  const reasons = (e.details as { reasons?: unknown }).reasons;
  if (!Array.isArray(reasons)) return '';
  return reasons.map((r) => `  - ${typeof r === 'string' ? r : JSON.stringify(r)}\n`).join('');
}

export const printJson = (io: CliIo, value: unknown): void => void io.stdout.write(JSON.stringify(value, null, 2) + '\n');
