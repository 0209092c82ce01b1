#!/usr/bin/env node
// Replaces tsc's dist/protocols/typebox.js (a re-export of @sinclair/typebox, its compiler and errors) with one
// minified ESM file holding just those exports. Loading TypeBox module by module is ~270 files and ~250 ms of CPU
// in every worker thread; one file is ~15 ms (docs/schemas.md, "Start-up cost"). Run by `npm run build` after tsc.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const OUT = 'dist/protocols/typebox.js';
const source = readFileSync(OUT, 'utf8');
if (!/from ['"]@sinclair\/typebox/.test(source)) throw new Error(`${OUT} does not re-export @sinclair/typebox: run tsc first`);

const result = await build({
  entryPoints: [OUT],
  outfile: OUT,
  allowOverwrite: true,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  sourcemap: true,
  metafile: true,
  logLevel: 'warning',
  banner: { js: '// @sinclair/typebox (MIT, https://github.com/sinclairzx81/typebox) bundled by scripts/bundle-typebox.mjs' },
});

// The bundle must be self-contained (no import of the package left) and export what src/protocols/typebox.ts does.
const inputs = Object.keys(result.metafile.inputs).length;
const output = readFileSync(OUT, 'utf8');
if (/\bfrom\s*['"]|\bimport\s*\(/.test(output)) throw new Error(`${OUT}: the bundle still imports a module`);
const exported = Object.keys(await import(pathToFileURL(OUT).href));
const expected = ['Errors', 'FormatRegistry', 'Kind', 'Type', 'TypeCompiler', 'TypeRegistry', 'ValueErrorType'];
const missing = expected.filter((name) => !exported.includes(name));
if (missing.length > 0) throw new Error(`${OUT}: the bundle lacks ${missing.join(', ')}`);
process.stdout.write(`bundled TypeBox: ${inputs} modules into ${OUT} (${Math.round(output.length / 1024)} KiB)\n`);
