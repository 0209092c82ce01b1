#!/usr/bin/env node
// Copies non-TypeScript assets (dashboard files, WASM kernels) from src/ to dist/ so the package needs no extra build step.
// The dashboard script is plain JS (type-checked by tsconfig.dashboard.json, served as is); .js is copied only from
// there so a stray .js elsewhere in src can never overwrite tsc's output.
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ASSET = /\.(html|css|svg|wasm|json|txt)$/;
const BROWSER_SCRIPT_DIR = join('src', 'api', 'dashboard');
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (ASSET.test(name) || (dir === BROWSER_SCRIPT_DIR && name.endsWith('.js')))
      cpSync(path, join('dist', relative('src', path)));
  }
}
if (existsSync('src')) walk('src');
