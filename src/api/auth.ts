/**
 * Who may use the API (#12): a caller with the bearer token (`Authorization: Bearer <token>`, the CLI and scripts)
 * or with a dashboard session cookie. The cookie holds an opaque random session id that maps to an expiry here,
 * in memory, never the token: a stolen cookie dies with its session or the node's restart, and the token never
 * sits in the browser's cookie jar. In open mode (`--insecure-open`) everyone is let in.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TorusError } from '../core/errors.js';

export const SESSION_COOKIE = 'torus_session';
/** How long a dashboard session lasts without signing in again (the printed URL signs in at once). */
export const SESSION_TTL_MS = 7 * 24 * 3_600_000;
/** At most this many live sessions; the oldest is dropped first (a flood of logins cannot grow memory). */
export const MAX_SESSIONS = 256;

/** What the server is told about the credential: open, or the one token it accepts (and where its secret came from). */
export type ApiAuthConfig = { readonly mode: 'open' } | { readonly mode: 'token'; readonly token: string; readonly secretSource?: string | undefined };

/** What /v1/node reports under `security` (never a secret or token value). */
export type SecurityView = { readonly mode: 'open'; readonly warning: string } | { readonly mode: 'secret'; readonly secretSource?: string | undefined };

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

export class ApiAuth {
  readonly open: boolean;
  readonly #tokenDigest: Buffer | undefined;
  readonly #secretSource: string | undefined;
  readonly #sessions = new Map<string, number>();
  readonly #now: () => number;

  constructor(config: ApiAuthConfig, now: () => number = Date.now) {
    this.open = config.mode === 'open';
    this.#tokenDigest = config.mode === 'token' ? digest(config.token) : undefined;
    this.#secretSource = config.mode === 'token' ? config.secretSource : undefined;
    this.#now = now;
  }

  get security(): SecurityView {
    return this.open
      ? { mode: 'open', warning: 'started with --insecure-open: anyone who reaches this node controls the cluster' }
      : { mode: 'secret', secretSource: this.#secretSource };
  }

  /** Equal-length digests compared in constant time: the answer time says nothing about the token. */
  tokenMatches(candidate: string): boolean {
    if (!this.#tokenDigest) return false;
    return timingSafeEqual(digest(candidate), this.#tokenDigest);
  }

  /** True for open mode, a valid bearer token or a live session cookie. */
  authenticated(req: IncomingMessage): boolean {
    if (this.open) return true;
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (bearer && this.tokenMatches(bearer[1]!)) return true;
    const session = cookie(req, SESSION_COOKIE);
    return session !== undefined && this.#sessionLive(session);
  }

  /** Throws TORUS_UNAUTHENTICATED (nothing else in it) unless the request is authenticated. */
  require(req: IncomingMessage): void {
    if (this.authenticated(req)) return;
    throw new TorusError('TORUS_UNAUTHENTICATED', 'authentication required: send Authorization: Bearer <token> (node dist/main.js token --api)');
  }

  /** A new session id, remembered until its expiry; returns the Set-Cookie value. */
  startSession(): string {
    const now = this.#now();
    for (const [id, expires] of this.#sessions) if (expires <= now) this.#sessions.delete(id);
    while (this.#sessions.size >= MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
    const id = randomBytes(32).toString('base64url');
    this.#sessions.set(id, now + SESSION_TTL_MS);
    return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}`;
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  #sessionLive(id: string): boolean {
    const expires = this.#sessions.get(id);
    if (expires === undefined) return false;
    if (expires > this.#now()) return true;
    this.#sessions.delete(id);
    return false;
  }
}

/** One cookie's value from the Cookie header, or undefined. */
export function cookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
