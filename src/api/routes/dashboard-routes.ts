import { readFileSync } from 'node:fs';
import { sendText } from '../http-io.js';
import type { Route } from '../router.js';
import { sendLoginPage, signInAndRedirect, WRONG_TOKEN } from './login-routes.js';

/**
 * The dashboard: three static files shipped in the package (the build copies them from src to dist, so no
 * user build step). app.js is plain JS type-checked by tsconfig.dashboard.json. Read once at boot so a
 * missing asset fails fast.
 */
const asset = (name: string): string => readFileSync(new URL(`../dashboard/${name}`, import.meta.url), 'utf8');

export function dashboardRoutes(): readonly Route[] {
  const files = {
    html: asset('index.html'),
    js: asset('app.js'),
    css: asset('style.css'),
  };
  const serve = (body: string, type: string): Route['handler'] => async ({ res }) => {
    sendText(res, 200, body, type);
    return undefined;
  };
  const page = serve(files.html, 'text/html; charset=utf-8');
  return [
    {
      method: 'GET',
      path: '/',
      summary: 'the dashboard page (the sign-in form without a session; `?token=` signs in and redirects to /)',
      access: 'public',
      handler: async (ctx) => {
        const { req, res, url, shared } = ctx;
        const token = url.searchParams.get('token');
        if (token !== null) {
          if (shared.auth.open || shared.auth.tokenMatches(token)) signInAndRedirect(res, shared.auth);
          else sendLoginPage(res, 401, WRONG_TOKEN);
          return undefined;
        }
        if (shared.auth.authenticated(req)) return page(ctx);
        sendLoginPage(res, 200);
        return undefined;
      },
    },
    { method: 'GET', path: '/dashboard/app.js', summary: 'dashboard script', handler: serve(files.js, 'text/javascript; charset=utf-8') },
    { method: 'GET', path: '/dashboard/style.css', summary: 'dashboard styles', handler: serve(files.css, 'text/css; charset=utf-8') },
  ];
}
