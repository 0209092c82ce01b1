/**
 * Shared plumbing of the CLI clients (status, place, instances, delete, peers, bench ring --live): flag
 * parsing with `--api URL` and `--json`, a small JSON client that turns the API's `{"error":…}` bodies back
 * into TorusErrors, and output helpers. Every request carries the API token found by `findApiToken`. Exit codes: 0 ok, 1 the node refused or failed, 2 usage error.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { TorusError, asTorusError, errorFromJson } from '../protocols/errors.js';
import { API_TOKEN_FILE, readApiTokenIn } from '../protocols/data-dir-files.js';
import type { Agent } from 'node:https';
import { isLoopback } from '../api/plain-http-policy.js';
import { requestText, type TextAnswer } from './http-request.js';
import { KnownApiHosts, normaliseFingerprint, pinAddress, pinnedAgent } from './pinned-tls.js';

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
  api: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  token: { type: 'string' },
  'data-dir': { type: 'string' },
  fingerprint: { type: 'string' },
} as const satisfies Options;

/** The CLI's data dir: `--data-dir`, env TORUS_DATA_DIR, else ~/.torus (the API token and the pinned certificates). */
export function cliDataDir(flag: unknown, env: NodeJS.ProcessEnv = process.env): string {
  return typeof flag === 'string' && flag !== '' ? flag : env.TORUS_DATA_DIR || join(homedir(), '.torus');
}

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
export function findApiToken(
  flags: { token?: unknown; dataDir?: unknown },
  env: NodeJS.ProcessEnv = process.env,
): ApiToken {
  const lookedIn: string[] = [];
  if (typeof flags.token === 'string' && flags.token !== '') return { token: flags.token, lookedIn: ['--token'] };
  lookedIn.push('--token (not given)');
  if (env.TORUS_TOKEN) return { token: env.TORUS_TOKEN, lookedIn: [...lookedIn, 'TORUS_TOKEN'] };
  lookedIn.push('TORUS_TOKEN (not set)');
  const dataDir = cliDataDir(flags.dataDir, env);
  const file = join(dataDir, API_TOKEN_FILE);
  const token = readApiTokenIn(dataDir);
  return { token, lookedIn: [...lookedIn, `${file} (${token ? 'found' : 'none there'})`] };
}

export interface ParsedCli<V> {
  readonly values: V & { api?: string; json?: boolean; help?: boolean };
  readonly positionals: string[];
  readonly client: ApiClient;
}

export function parseCli<O extends Options>(
  args: readonly string[],
  options: O,
  maxPositionals = 0,
): ParsedCli<Record<keyof O, unknown>> {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...args],
      options: { ...COMMON, ...options } as Options,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.positionals.length > maxPositionals)
    throw new UsageError(`unexpected argument ${parsed.positionals[maxPositionals]}`);
  const api = (parsed.values.api as string | undefined) ?? process.env.TORUS_API ?? DEFAULT_API_URL;
  try {
    new URL(api);
  } catch {
    throw new UsageError(`--api: not a URL: ${api}`);
  }
  const token = findApiToken({ token: parsed.values.token, dataDir: parsed.values['data-dir'] });
  const fingerprint = parsed.values.fingerprint as string | undefined;
  if (fingerprint !== undefined && !normaliseFingerprint(fingerprint))
    throw new UsageError(`--fingerprint: not a SHA-256 fingerprint (64 hex digits, colons optional): ${fingerprint}`);
  const client = new ApiClient(api, token, { fingerprint, dataDir: cliDataDir(parsed.values['data-dir']) });
  return {
    values: parsed.values as unknown as ParsedCli<Record<keyof O, unknown>>['values'],
    positionals: parsed.positionals,
    client,
  };
}

export interface ApiTlsOptions {
  /** The certificate fingerprint to insist on (`--fingerprint`; else TORUS_API_FINGERPRINT, else the pinned one). */
  readonly fingerprint?: string | undefined;
  /** Where `known-api-hosts` lives (default: the CLI's data dir). */
  readonly dataDir?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
}

export class ApiClient {
  /** For https: the agent that connects only to the pinned certificate (pinned-tls.ts). */
  readonly agent: Agent | undefined;
  readonly #cleartextRemote: boolean;

  constructor(
    readonly base: string,
    readonly token: ApiToken = { token: undefined, lookedIn: [] },
    tls: ApiTlsOptions = {},
  ) {
    const url = new URL(base);
    const env = tls.env ?? process.env;
    this.#cleartextRemote =
      url.protocol === 'http:' && !isLoopback(url.hostname.replace(/^\[(.*)\]$/, '$1')) && url.hostname !== 'localhost';
    if (url.protocol !== 'https:') {
      this.agent = undefined;
      return;
    }
    const known = KnownApiHosts.in(tls.dataDir ?? cliDataDir(undefined, env));
    const address = pinAddress(url, DEFAULT_API_PORT);
    const given = tls.fingerprint ?? env.TORUS_API_FINGERPRINT;
    const expected = given !== undefined ? normaliseFingerprint(given) : known.get(address);
    if (given !== undefined && !expected)
      throw new UsageError(
        `${tls.fingerprint !== undefined ? '--fingerprint' : 'TORUS_API_FINGERPRINT'}: not a SHA-256 fingerprint: ${given}`,
      );
    const from =
      tls.fingerprint !== undefined
        ? '--fingerprint'
        : env.TORUS_API_FINGERPRINT !== undefined
          ? 'TORUS_API_FINGERPRINT'
          : `pinned in ${known.file}`;
    this.agent = pinnedAgent(base, address, { expected, from, known });
  }

  /**
   * Refuses, before anything is sent, to send the token in clear to another machine: the node would refuse it
   * anyway (plain HTTP from another host carries no credential), and by then it would have crossed the LAN.
   */
  assertSafeToSend(): void {
    if (!this.#cleartextRemote || !this.token.token) return;
    const url = new URL(this.base);
    throw new TorusError(
      'TORUS_TLS_REQUIRED',
      `not sending the API token over plain HTTP to ${url.host}: it would cross the network in clear. Use --api https://${url.host} ` +
        '(the node prints its certificate fingerprint at start; pass it with --fingerprint or TORUS_API_FINGERPRINT, or the first one seen is pinned)',
      { api: this.base, url: `https://${url.host}` },
    );
  }

  /** The Authorization header (empty without a token: the node then answers 401, explained below). */
  get authHeaders(): Record<string, string> {
    return this.token.token ? { authorization: `Bearer ${this.token.token}` } : {};
  }

  url(path: string): string {
    return new URL(path, this.base.endsWith('/') ? this.base : `${this.base}/`).href.replace(/([^:])\/\/+/g, '$1/');
  }

  async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    this.assertSafeToSend();
    let answer: TextAnswer;
    try {
      answer = await requestText(this.url(path), {
        method,
        agent: this.agent,
        headers: {
          ...this.authHeaders,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      if (error instanceof TorusError) throw error; // the certificate check's refusal, as it is
      const cause = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new TorusError(
        'TORUS_API_UNREACHABLE',
        `cannot reach the node API at ${this.base} (${cause}); is \`torus start\` running? (--api URL)`,
        { api: this.base },
      );
    }
    const { text } = answer;
    const res = { status: answer.status, ok: answer.status >= 200 && answer.status < 300 };
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      throw new TorusError('TORUS_API_UNREACHABLE', `${this.base} answered HTTP ${res.status} with non-JSON`, {
        api: this.base,
      });
    }
    if (res.status === 401) throw this.unauthenticated();
    if (!res.ok) throw errorFromJson((json as { error?: unknown } | undefined)?.error);
    return json as T;
  }

  /** A 401 explained: whether a token was sent, and every place the CLI looked for one. */
  unauthenticated(): TorusError {
    const sent = this.token.token ? 'refused the API token' : 'needs an API token and none was found';
    return new TorusError(
      'TORUS_UNAUTHENTICATED',
      `the node at ${this.base} ${sent}. Looked in: ${this.token.lookedIn.join(', ')}. ` +
        "On the node's machine `node dist/main.js token --api` prints it; pass it with --token or TORUS_TOKEN (or --data-dir DIR for a node started with --data-dir).",
      { api: this.base, lookedIn: this.token.lookedIn },
    );
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }
}

/** Runs a command body with the common error handling: usage → 2, API/transport failures → 1. */
export async function runCli(
  io: CliIo,
  usage: string,
  args: readonly string[],
  json: boolean,
  body: () => Promise<number>,
): Promise<number> {
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
    if (json) io.stdout.write(`${JSON.stringify({ error: e.toJSON() })}\n`);
    else
      io.stderr.write(
        `error: ${e.message}${e.code === 'TORUS_API_UNREACHABLE' ? '' : ` (${e.code})`}\n${detailLines(e)}`,
      );
    return 1;
  }
}

function detailLines(e: TorusError): string {
  const reasons = (e.details as { reasons?: unknown }).reasons;
  if (!Array.isArray(reasons)) return '';
  return reasons.map((r) => `  - ${typeof r === 'string' ? r : JSON.stringify(r)}\n`).join('');
}

export const printJson = (io: CliIo, value: unknown): void =>
  void io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
