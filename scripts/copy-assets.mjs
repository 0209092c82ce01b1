#!/usr/bin/env node
// Copies non-TypeScript assets (dashboard files, WASM kernels) from src/ to dist/ so the package needs no extra build step.
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ASSET = /\.(html|css|svg|wasm|json|txt)$/;
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (ASSET.test(name)) cpSync(path, join('dist', relative('src', path)));
  }
}
if (existsSync('src')) walk('src');
