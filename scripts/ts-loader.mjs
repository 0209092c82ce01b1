// The tests' TypeScript loader (`--import=./scripts/ts-loader.mjs`, set in .taprc): registers ts-hooks.mjs in this
// thread. Worker threads inherit the flag and register their own hooks.
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);

// Child processes of a test get this process's loader flags (childExecArgv in src/runtime/module-url.ts) and may
// run in another folder, where the relative path given on the command line would not resolve: make it absolute.
const self = `--import=${import.meta.url}`;
for (const [i, arg] of process.execArgv.entries()) {
  if (/^--import=.*ts-loader\.mjs$/.test(arg)) process.execArgv[i] = self;
}
