/**
 * Who may use the API: a caller with the bearer token (`Authorization: Bearer <token>`, the CLI and scripts)
 * or with a dashboard session cookie. The cookie is never the token: it is a random session id with its expiry,
 * signed with a key derived from the token (HMAC). So it holds no server memory (nothing for a flood of logins to
 * grow), it outlives a node restart (the open dashboard reconnects by itself), it works on every node with the
 * same token, and it ends at its expiry or when the token changes (rotating the cluster secret signs every
 * browser out). In open mode (`--insecure-open`) everyone is let in.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TorusError } from '../protocols/errors.js';
import { PEER_PROOF_HEADER, PeerProofChecker } from '../protocols/peer-http-proof.js';

export const SESSION_COOKIE = 'torus_session';
/** How long a dashboard session lasts without signing in again (the printed URL signs in at once). */
export const SESSION_TTL_MS = 7 * 24 * 3_600_000;

/** What the server is told about the credential: open, or the one token it accepts (and where its secret came from). */
export type ApiAuthConfig =
  | { readonly mode: 'open' }
  | {
      readonly mode: 'token';
      readonly token: string;
      readonly secretSource?: string | undefined;
      /** The cluster's peer-HTTP key: other nodes prove it on the routes marked `peer` instead of sending the token. */
      readonly peerKey?: string | undefined;
    };

/** What /v1/node reports under `security` (never a secret or token value). */
export type SecurityView =
  | { readonly mode: 'open'; readonly warning: string }
  | { readonly mode: 'secret'; readonly secretSource?: string | undefined };

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

export class ApiAuth {
  readonly open: boolean;
  readonly #tokenDigest: Buffer | undefined;
  readonly #secretSource: string | undefined;
  /** Signs session cookies; derived from the token, so a new token invalidates every session. */
  readonly #sessionKey: Buffer | undefined;
  readonly #now: () => number;
  readonly #peers: PeerProofChecker | undefined;

  constructor(config: ApiAuthConfig, now: () => number = Date.now) {
    this.#peers = config.mode === 'token' && config.peerKey ? new PeerProofChecker(config.peerKey, now) : undefined;
    this.open = config.mode === 'open';
    this.#tokenDigest = config.mode === 'token' ? digest(config.token) : undefined;
    this.#sessionKey =
      config.mode === 'token'
        ? createHmac('sha256', config.token).update('torus dashboard session v1').digest()
        : undefined;
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

  /** Whether the request carries a peer proof at all (then it is judged as one, never as a person's credential). */
  static claimsPeer(req: IncomingMessage): boolean {
    return req.headers[PEER_PROOF_HEADER] !== undefined;
  }

  /**
   * Throws TORUS_UNAUTHENTICATED unless another node of the cluster proved the peer key for exactly this bodiless
   * request (once: a replayed proof is refused). Open mode lets everyone in.
   */
  requirePeer(req: IncomingMessage): string | undefined {
    if (this.open) return undefined;
    const verdict = this.#peers
      ? this.#peers.check(req.headers[PEER_PROOF_HEADER], req.method ?? 'GET', req.url ?? '/')
      : { ok: false as const, why: 'this node accepts no peer proofs' };
    if (verdict.ok) return verdict.nodeId;
    throw new TorusError('TORUS_UNAUTHENTICATED', `peer proof refused: ${verdict.why}`);
  }

  /** Throws TORUS_UNAUTHENTICATED (nothing else in it) unless the request is authenticated. */
  require(req: IncomingMessage): void {
    if (this.authenticated(req)) return;
    throw new TorusError(
      'TORUS_UNAUTHENTICATED',
      'authentication required: send Authorization: Bearer <token> (node dist/main.js token --api)',
    );
  }

  /** A new session (random id, expiry, signature); returns the Set-Cookie value. `Secure` when served over TLS. */
  startSession(overTls = false): string {
    const body = `${randomBytes(24).toString('base64url')}.${(this.#now() + SESSION_TTL_MS).toString(36)}`;
    return `${SESSION_COOKIE}=${body}.${this.#sign(body)}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}${overTls ? '; Secure' : ''}`;
  }

  #sign(body: string): string {
    return createHmac('sha256', this.#sessionKey ?? Buffer.alloc(32))
      .update(body)
      .digest('base64url');
  }

  #sessionLive(value: string): boolean {
    if (!this.#sessionKey || value.length > 200) return false;
    const m = /^([A-Za-z0-9_-]{32})\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
    if (!m) return false;
    const expected = Buffer.from(this.#sign(`${m[1]}.${m[2]}`));
    const got = Buffer.from(m[3]!);
    return got.length === expected.length && timingSafeEqual(got, expected) && parseInt(m[2]!, 36) > this.#now();
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
