import { readFileSync } from 'node:fs';
import { sendText } from '../http-io.js';
import type { Route } from '../router.js';

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
  return [
    { method: 'GET', path: '/', summary: 'the dashboard page', handler: serve(files.html, 'text/html; charset=utf-8') },
    { method: 'GET', path: '/dashboard/app.js', summary: 'dashboard script', handler: serve(files.js, 'text/javascript; charset=utf-8') },
    { method: 'GET', path: '/dashboard/style.css', summary: 'dashboard styles', handler: serve(files.css, 'text/css; charset=utf-8') },
  ];
}
