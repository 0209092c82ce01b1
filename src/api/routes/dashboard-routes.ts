import { readFileSync } from 'node:fs';
import { sendText } from '../../http/http-io.js';
import type { Route } from '../router.js';
import { sendLoginPage, signInAndRedirect, WRONG_TOKEN } from './login-routes.js';

/**
 * The dashboard: static files shipped in the package (the build copies them from src to dist, so no
 * user build step). app.js is plain JS type-checked by tsconfig.dashboard.json. Read once at boot so a
 * missing asset fails fast.
 */
const asset = (name: string): string => readFileSync(new URL(`../dashboard/${name}`, import.meta.url), 'utf8');

export function dashboardRoutes(): readonly Route[] {
  const files = {
    html: asset('index.html'),
    css: asset('style.css'),
  };
  // The page's ES modules: app.js imports the others.
  const scripts = ['app.js', 'dom.js', 'jobs.js', 'bench-chart.js', 'previews.js'].map((name) => ({
    name,
    body: asset(name),
  }));
  const serve =
    (body: string, type: string): Route['handler'] =>
    async ({ res }) => {
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
    ...scripts.map(
      ({ name, body }): Route => ({
        method: 'GET',
        path: `/dashboard/${name}`,
        summary: `dashboard script (${name})`,
        handler: serve(body, 'text/javascript; charset=utf-8'),
      }),
    ),
    {
      method: 'GET',
      path: '/dashboard/style.css',
      summary: 'dashboard styles',
      handler: serve(files.css, 'text/css; charset=utf-8'),
    },
  ];
}
