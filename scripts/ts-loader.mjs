// The tests' TypeScript loader (`--import=./scripts/ts-loader.mjs`, set in .taprc): installs ts-hooks.mjs in this
// thread. Worker threads inherit the flag and install their own.
import * as module from 'node:module';

if (typeof module.registerHooks === 'function') {
  const { resolveSync, loadSync } = await import('./ts-hooks.mjs');
  module.registerHooks({ resolve: resolveSync, load: loadSync });
} else {
  module.register('./ts-hooks.mjs', import.meta.url);
}

// Child processes of a test get this process's loader flags (childExecArgv in src/runtime/module-url.ts) and may
// run in another folder, where the relative path given on the command line would not resolve: make it absolute.
const self = `--import=${import.meta.url}`;
for (const [i, arg] of process.execArgv.entries()) {
  if (/^--import=.*ts-loader\.mjs$/.test(arg)) process.execArgv[i] = self;
}
