/**
 * The README's table of node flags, written from the option table. `node scripts/readme-flags.mjs` (after a
 * build) puts it between the markers; a test fails when the README's copy differs, so the two cannot drift.
 */
import type { OptionSpec } from './option-spec.js';
import { NODE_OPTIONS } from './option-table.js';
import { flagLabel, rangeOf } from './usage.js';

export const README_START =
  '<!-- node-flags: written from src/node/option-table.ts by scripts/readme-flags.mjs; do not edit -->';
export const README_END = '<!-- /node-flags -->';

const cell = (text: string): string => text.replaceAll('|', '\\|');
const code = (text: string | undefined): string => (text === undefined ? '' : `\`${cell(text)}\``);

export function readmeFlagTable(table: Readonly<Record<string, OptionSpec>> = NODE_OPTIONS): string {
  const rows = Object.values(table).map((o) =>
    [
      code(flagLabel(o)),
      code(o.key),
      code(o.env),
      o.arg === undefined ? '' : cell(o.default),
      rangeOf(o),
      cell(o.help),
    ].join(' | '),
  );
  return [
    '| flag | config key | environment | default | range | meaning |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}

/** `readme` with its table replaced by the one written from the option table. */
export function withFlagTable(readme: string): string {
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  if (start < 0 || end < start) throw new Error('README.md has no node-flags markers');
  return `${readme.slice(0, start + README_START.length)}\n${readmeFlagTable()}\n${readme.slice(end)}`;
}
