// Module hooks for the tests (installed by ts-loader.mjs). TypeScript files are transpiled by esbuild: types
// stripped, no type check (`npm run typecheck` does that), the same result as tsc's emit for these sources
// (verbatimModuleSyntax: imports stay as written). An import of `x.js` that does not exist resolves to `x.ts`, the
// way TypeScript's NodeNext resolution maps the specifiers the sources are written with.
// Why not tap's own TypeScript plugin: it loads ts-node and the TypeScript compiler into every test process and
// every worker thread (each actor is one), about 3 s of CPU each, a third of the suite's time on 2 cores.
// Two flavours of the same hooks: synchronous ones for module.registerHooks (Node 22.15 and later, in-thread) and
// asynchronous ones for module.register (Node 20, which has only that; newer Nodes deprecate it with a warning).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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
const esbuild = () => createRequire(import.meta.url)('esbuild');

const retryAsTs = (specifier, error) =>
  error?.code === 'ERR_MODULE_NOT_FOUND' && /\.m?js$/.test(specifier) ? specifier.replace(/js$/, 'ts') : undefined;

/** The cached transpiled code of a file, or undefined with the cache path to fill. */
function cached(path) {
  const text = readFileSync(path, 'utf8');
  const key = createHash('sha256').update(`${SALT}\0${path}\0${text}`).digest('hex').slice(0, 32);
  const file = join(CACHE, `${key}.js`);
  try {
    return { code: readFileSync(file, 'utf8'), text, file };
  } catch {
    return { code: undefined, text, file };
  }
}

function keep(file, code) {
  // Written aside, then renamed: concurrent test processes never read half a file.
  mkdirSync(CACHE, { recursive: true });
  const tmp = `${file}.${process.pid}-${Math.random().toString(36).slice(2)}`;
  writeFileSync(tmp, code);
  renameSync(tmp, file);
  return code;
}

export function resolveSync(specifier, context, next) {
  try {
    return next(specifier, context);
  } catch (error) {
    const ts = retryAsTs(specifier, error);
    if (!ts) throw error;
    return next(ts, context);
  }
}

export function loadSync(url, context, next) {
  if (!url.startsWith('file:') || !TS.test(url)) return next(url, context);
  const path = fileURLToPath(url);
  const c = cached(path);
  const code = c.code ?? keep(c.file, esbuild().transformSync(c.text, { ...OPTIONS, sourcefile: path }).code);
  return { format: 'module', source: code, shortCircuit: true };
}

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    const ts = retryAsTs(specifier, error);
    if (!ts) throw error;
    return next(ts, context);
  }
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !TS.test(url)) return next(url, context);
  const path = fileURLToPath(url);
  const c = cached(path);
  const code = c.code ?? keep(c.file, (await esbuild().transform(c.text, { ...OPTIONS, sourcefile: path })).code);
  return { format: 'module', source: code, shortCircuit: true };
}
