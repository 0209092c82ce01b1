// Module hooks for the tests (registered by ts-loader.mjs). TypeScript files are transpiled by esbuild: types
// stripped, no type check (`npm run typecheck` does that), the same result as tsc's emit for these sources
// (verbatimModuleSyntax: imports stay as written). An import of `x.js` that does not exist resolves to `x.ts`, the
// way TypeScript's NodeNext resolution maps the specifiers the sources are written with.
// Why not tap's own TypeScript plugin: it loads ts-node and the TypeScript compiler into every test process and
// every worker thread (each actor is one), about 3 s of CPU each, a third of the suite's time on 2 cores.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TS = /\.m?ts$/;
const OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: 'es2022',
  sourcemap: 'inline',
  tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
};
// Most test processes and threads load the same few hundred modules: the transpiled code is kept on disk by
// content hash (and these options), so esbuild is started only on a miss.
const CACHE = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.cache', 'torus-ts');
const SALT = JSON.stringify(OPTIONS);
let esbuild;

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !/\.m?js$/.test(specifier)) throw error;
    return next(specifier.replace(/js$/, 'ts'), context);
  }
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !TS.test(url)) return next(url, context);
  const path = fileURLToPath(url);
  const text = readFileSync(path, 'utf8');
  const key = createHash('sha256').update(`${SALT}\0${path}\0${text}`).digest('hex').slice(0, 32);
  const cached = join(CACHE, `${key}.js`);
  let code;
  try {
    code = readFileSync(cached, 'utf8');
  } catch {
    esbuild ??= await import('esbuild');
    ({ code } = await esbuild.transform(text, { ...OPTIONS, sourcefile: path }));
    // Written aside, then renamed: concurrent test processes never read half a file.
    mkdirSync(CACHE, { recursive: true });
    const tmp = `${cached}.${process.pid}-${Math.random().toString(36).slice(2)}`;
    writeFileSync(tmp, code);
    renameSync(tmp, cached);
  }
  return { format: 'module', source: code, shortCircuit: true };
}
