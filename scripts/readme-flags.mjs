// Writes the README's node-flag table from the option table (src/node/option-table.ts):
//   node --import=./scripts/ts-loader.mjs scripts/readme-flags.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { withFlagTable } from '../src/node/readme-flags.ts';

const path = new URL('../README.md', import.meta.url);
writeFileSync(path, withFlagTable(readFileSync(path, 'utf8')));
