import type { IncomingMessage, ServerResponse } from 'node:http';
import { TorusError, ValidationError, asTorusError } from '../protocols/errors.js';
import { redactEnv } from './redact.js';

/** Default request-body cap: placement requests and bench options are small; anything bigger is abuse. */
export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

/** Seconds a client should wait before retrying when there is no leader (a re-election takes a few seconds). */
export const NO_LEADER_RETRY_AFTER_S = 2;

/**
 * Reads and parses a JSON body. Limits are enforced while streaming (Content-Length is checked first but
 * never trusted), so a huge body costs at most `limit` bytes of memory.
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  const text = await readTextBody(req, limit);
  // A POST without a body reads as {} so optional-only bodies (bench) can be sent empty.
  if (text === '') return {};
  // JSON only: a form or text/plain POST from a foreign page (no CORS preflight) is refused.
  if (type !== 'application/json') {
    throw new TorusError('TORUS_API_UNSUPPORTED_MEDIA_TYPE', 'request body must be application/json', {
      where: 'headers',
      path: 'content-type',
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ValidationError('body', '', `invalid JSON (${(error as Error).message})`);
  }
}

/** Reads the body as UTF-8 text, at most `limit` bytes (TORUS_API_BODY_TOO_LARGE beyond). */
export async function readTextBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function tooLarge(limit: number): TorusError {
  return new TorusError('TORUS_API_BODY_TOO_LARGE', `request body exceeds ${limit} bytes`, {
    where: 'body',
    path: '',
    limit,
  });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = `${JSON.stringify(body, null, 2)}\n`;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendText(res: ServerResponse, status: number, body: string, contentType: string): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}

/** The one error wire shape: `{"error": {"message", "code", "details"}}`, status from the registry. */
export function sendError(res: ServerResponse, error: unknown, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy(); // mid-stream failure: the only honest signal left is a cut connection
    return;
  }
  const e = asTorusError(error);
  const headers: Record<string, string> = { ...extraHeaders };
  if (e.httpStatus === 503) headers['retry-after'] = String(NO_LEADER_RETRY_AFTER_S);
  if (e.code === 'TORUS_RATE_LIMITED') headers['retry-after'] = String(e.details.retryAfterS ?? 1);
  if (e.code === 'TORUS_UNAUTHENTICATED') headers['www-authenticate'] = 'Bearer realm="torus"';
  // The unread rest of an oversized body would otherwise be parsed as the next request.
  if (e.code === 'TORUS_API_BODY_TOO_LARGE') headers.connection = 'close';
  // Never leak internals (stack, paths) of an unexpected failure to the client.
  const body =
    e.code === 'TORUS_INTERNAL' ? { code: e.code, message: 'internal error', details: {} } : redactEnv(e.toJSON());
  sendJson(res, e.httpStatus, { error: body }, headers);
}
