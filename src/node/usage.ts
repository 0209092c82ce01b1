/** The `--help` text, written from the option table: one entry, one item, so no option is missing or stale. */
import type { OptionSpec } from './option-spec.js';
import { NODE_OPTIONS } from './option-table.js';

const WIDTH = 116;
const LABEL = 24;

/** `-p, --port N`, `--allow-exec[=CMD,...]`, `--no-mdns`. */
export function flagLabel(o: OptionSpec): string {
  const arg = o.arg === undefined ? '' : o.arg.startsWith('[') ? o.arg : ` ${o.arg}`;
  return `${o.short ? `-${o.short}, ` : ''}--${o.flag}${arg}`;
}

/** `0 to 100`, `above 0 to 1000`. */
export const rangeOf = (o: OptionSpec): string =>
  o.bounds ? `${o.bounds.exclusiveMin ? 'above ' : ''}${o.bounds.min} to ${o.bounds.max}` : '';

/** The help line with what the table adds to it: the default, the bounds, the environment variable. */
export function describe(o: OptionSpec): string {
  const notes: string[] = [];
  if (o.arg !== undefined && o.default !== 'none') notes.push(`default ${o.default}`);
  if (o.bounds) notes.push(rangeOf(o));
  if (o.env) notes.push(`also ${o.env}`);
  return notes.length === 0 ? o.help : `${o.help} (${notes.join('; ')})`;
}

function wrap(words: string[], first: number, rest: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    const limit = lines.length === 0 ? first : rest;
    if (line !== '' && line.length + 1 + word.length > limit) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

function item(o: OptionSpec): string {
  const label = `  ${flagLabel(o)}`;
  const indent = ' '.repeat(LABEL + 2);
  const start = label.length < LABEL + 1 ? label.padEnd(LABEL + 2) : `${label}  `;
  const [head = '', ...tail] = wrap(describe(o).split(' '), WIDTH - start.length, WIDTH - indent.length);
  return [start + head, ...tail.map((l) => indent + l)].join('\n');
}

export const NODE_USAGE = `Usage: node dist/main.js [start] [options]

Starts a torus node: discovers peers, measures links, joins the cluster's event log, serves the HTTP API
and dashboard, and runs the runners placed on this machine.

Options:
${Object.values(NODE_OPTIONS as Readonly<Record<string, OptionSpec>>)
  .map(item)
  .join('\n')}`;
