/**
 * What plain HTTP may carry once the node serves TLS. From this machine (loopback) everything: the local CLI and
 * dashboard need no certificate and their bytes never reach a wire. From another machine only what carries no
 * person's credential: `GET /node_id`, the probe and artifact peer routes (answered before this check, each
 * with its own proof), and routes another node calls with a single-use peer proof. Anything else (a bearer
 * token, a session cookie, a sign-in) is refused before it is read, with the https URL to use instead: a
 * credential that crossed the LAN in clear must not also work.
 */
import type { IncomingMessage } from 'node:http';
import { isIPv4 } from 'node:net';
import { TorusError } from '../protocols/errors.js';

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  return v4.startsWith('127.') || v4 === '::1';
}

export function overTls(req: IncomingMessage): boolean {
  return (req.socket as { encrypted?: boolean }).encrypted === true;
}

/** True when this request came in clear from another machine (so it may carry no person's credential). */
export function plainFromAnotherHost(req: IncomingMessage): boolean {
  return !overTls(req) && !isLoopback(req.socket.remoteAddress);
}

/**
 * A browser that typed `http://node:52515/` from another machine, with no credential in the request: sent on to
 * the https URL (308) instead of an error page. Anything carrying a credential is refused instead (tlsRequired).
 */
export function httpsRedirect(req: IncomingMessage): string | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  if (req.headers.authorization !== undefined || req.headers.cookie !== undefined) return undefined;
  const target = req.url ?? '/';
  if (!target.startsWith('/') || new URL(target, 'http://x.invalid').searchParams.has('token')) return undefined;
  return `https://${req.headers.host ?? 'this-node'}${target}`;
}

/** The refusal: names the https URL of the same request and the certificate fingerprint to pin. */
export function tlsRequired(req: IncomingMessage, fingerprint: string): TorusError {
  const host = req.headers.host ?? 'this-node';
  const url = `https://${host}${(req.url ?? '/').split('?')[0]}`;
  return new TorusError(
    'TORUS_TLS_REQUIRED',
    `plain HTTP from another machine carries no credentials (they would cross the network in clear): use ${url} ` +
      `(certificate sha256 ${fingerprint}); anything sent with this request was not used`,
    { url, fingerprint },
  );
}
