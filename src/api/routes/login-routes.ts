import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { ApiAuth } from '../auth.js';
import { readTextBody, sendText } from '../../http/http-io.js';
import type { Route } from '../router.js';

/**
 * Signing the dashboard in, Jupyter style: opening the URL the node prints (`/?token=…`) or pasting the token
 * into the form at /login starts a session (an HttpOnly, SameSite=Strict cookie holding an opaque id) and
 * redirects to `/` so the token leaves the address bar. Without a session, `/` shows the same form.
 */
const LOGIN_BODY_LIMIT = 4_096;
const page = readFileSync(new URL('../dashboard/login.html', import.meta.url), 'utf8');

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The login form (200 when asked for, 401 after a wrong token). */
export function sendLoginPage(res: ServerResponse, status: number, message = ''): void {
  res.setHeader('referrer-policy', 'same-origin');
  sendText(res, status, page.replace('{{message}}', escapeHtml(message)), 'text/html; charset=utf-8');
}

/** Sets the session cookie (unless open) and sends the browser to the dashboard without the token in the URL. */
export function signInAndRedirect(res: ServerResponse, auth: ApiAuth): void {
  const overTls = (res.req?.socket as { encrypted?: boolean } | undefined)?.encrypted === true;
  const headers: Record<string, string> = {
    location: '/',
    'cache-control': 'no-store',
    'referrer-policy': 'same-origin',
    'content-length': '0',
  };
  if (!auth.open) headers['set-cookie'] = auth.startSession(overTls);
  res.writeHead(303, headers);
  res.end();
}

export const WRONG_TOKEN = "That is not this cluster's API token.";

export const loginRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/login',
    summary: 'the dashboard sign-in form (paste the API token)',
    access: 'public',
    handler: async ({ res }) => {
      sendLoginPage(res, 200);
      return undefined;
    },
  },
  {
    method: 'POST',
    path: '/login',
    summary: 'sign the dashboard in with the API token (form field `token`): 303 to / with a session cookie',
    access: 'public',
    handler: async ({ req, res, shared }) => {
      const form = new URLSearchParams(await readTextBody(req, LOGIN_BODY_LIMIT));
      const token = (form.get('token') ?? '').trim();
      if (shared.auth.open || shared.auth.tokenMatches(token)) signInAndRedirect(res, shared.auth);
      else sendLoginPage(res, 401, WRONG_TOKEN);
      return undefined;
    },
  },
];
