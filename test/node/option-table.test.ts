/**
 * The option table drives everything: each entry must show in --help and the README, parse from its flag and its
 * config key to the same configuration, and keep its bounds from both. Table-driven, so a new option is covered
 * as soon as it is added (an entry without an example must be listed below, with why).
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_USAGE, parseNodeArgs } from '../../src/node/config.js';
import { configFileSchema } from '../../src/node/config-file.js';
import type { OptionSpec } from '../../src/node/option-spec.js';
import { NODE_OPTIONS } from '../../src/node/option-table.js';
import { README_END, README_START, readmeFlagTable } from '../../src/node/readme-flags.js';
import { describe, flagLabel } from '../../src/node/usage.js';

const dir = mkdtempSync(join(tmpdir(), 'torus-options-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const configFile = (value: object): string => {
  const p = join(dir, `c${files++}.json`);
  writeFileSync(p, JSON.stringify(value));
  return p;
};

const entries = Object.entries(NODE_OPTIONS as Readonly<Record<string, OptionSpec>>);
/** Options that only work together: each is given with its companion's example. */
const COMPANIONS: Readonly<Record<string, string>> = { tlsCert: 'tlsKey', tlsKey: 'tlsCert' };
/** Options without an example value: flag-only switches and file paths read at parse time (tested elsewhere). */
const NO_EXAMPLE = ['secretFile', 'apiTokenFile', 'repairState', 'config', 'help'];

t.test("the README's flag table is the one written from the option table", async (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  t.ok(start >= 0 && end > start, 'the README has the markers');
  const table = readme.slice(start + README_START.length, end).trim();
  t.equal(
    table,
    readmeFlagTable(),
    'README.md differs: run node --import=./scripts/ts-loader.mjs scripts/readme-flags.mjs',
  );
  for (const [, o] of entries) t.ok(table.includes(`--${o.flag}`), `--${o.flag} is in the README`);
});

t.test('every entry is in --help, with its default, bounds and environment variable', async (t) => {
  const help = NODE_USAGE.replace(/\s+/g, ' ');
  for (const [name, o] of entries) {
    t.ok(help.includes(flagLabel(o)), `${name}: ${flagLabel(o)}`);
    t.ok(help.includes(describe(o).replace(/\s+/g, ' ')), `${name}: its help line, default and bounds`);
    if (o.env) t.ok(help.includes(o.env), `${name}: ${o.env}`);
  }
});

t.test('every config key is in the schema, and only those', async (t) => {
  const schema = configFileSchema(NODE_OPTIONS);
  t.same(Object.keys(schema.properties).sort(), entries.flatMap(([, o]) => (o.key ? [o.key] : [])).sort());
  t.equal(schema.additionalProperties, false);
});

t.test('each option parses from its flag and from its config key to the same configuration', async (t) => {
  const defaults = parseNodeArgs([], {}).config;
  const asFlag = (o: OptionSpec): string[] =>
    o.example?.[0] === true ? [`--${o.flag}`] : [`--${o.flag}=${o.example?.[0]}`];
  const untested: string[] = [];
  for (const [name, o] of entries) {
    if (!o.key || !o.example) {
      untested.push(name);
      continue;
    }
    const others = COMPANIONS[name] ? [NODE_OPTIONS[COMPANIONS[name] as keyof typeof NODE_OPTIONS] as OptionSpec] : [];
    const flags = [o, ...others].flatMap(asFlag);
    const file = Object.fromEntries([o, ...others].map((e) => [e.key, e.example?.[1]]));
    const { secretSource: a, ...byFlag } = parseNodeArgs(flags, {}).config;
    const { secretSource: b, ...byFile } = parseNodeArgs(['--config', configFile(file)], {}).config;
    t.same(byFlag, byFile, `${name}: ${flags.join(' ')} and ${JSON.stringify(file)}`);
    t.notSame(byFlag, { ...defaults, secretSource: undefined }, `${name}: the example is not the default`);
  }
  t.same(untested.sort(), [...NO_EXAMPLE].sort(), 'every other option has an example');
});

t.test('each bounded option refuses values outside its bounds, from the flag and the config file', async (t) => {
  for (const [name, o] of entries) {
    const b = o.bounds;
    if (!b || !o.key) continue;
    const step = b.integer ? 1 : b.max / 10;
    const inside = [b.exclusiveMin ? b.min + step : b.min, b.max];
    const outside = [b.exclusiveMin ? b.min : b.min - 1, b.max + step];
    for (const n of inside) {
      t.doesNotThrow(() => parseNodeArgs([`--${o.flag}=${n}`], {}), `${name}: --${o.flag}=${n}`);
      t.doesNotThrow(() => parseNodeArgs(['--config', configFile({ [o.key as string]: n })], {}), `${name}: ${n}`);
    }
    for (const n of outside) {
      t.throws(() => parseNodeArgs([`--${o.flag}=${n}`], {}), { message: `flag --${o.flag}: expected ${b.text}` });
      t.throws(() => parseNodeArgs(['--config', configFile({ [o.key as string]: n })], {}), {
        message: new RegExp(`^config ${o.key}: expected `),
      });
    }
    if (b.integer)
      t.throws(() => parseNodeArgs([`--${o.flag}=${b.max - 0.5}`], {}), { message: `flag --${o.flag}: expected` });
  }
});

t.test('a config value of the wrong type, or an unknown key, names the key and the file; nothing starts', async (t) => {
  for (const [name, o] of entries) {
    if (!o.key) continue;
    const path = configFile({ [o.key]: [[1]] });
    t.throws(
      () => parseNodeArgs(['--config', path], {}),
      { message: `config ${o.key}: expected ${o.expects}, got [[1]] in ${path}` },
      name,
    );
  }
  const path = configFile({ prot: 1 });
  t.throws(() => parseNodeArgs(['--config', path], {}), { message: `config prot: unknown option in ${path}; known:` });
});

t.test("docs/security.md's limit tables give each flag the table's default", async (t) => {
  const doc = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
  const byFlag = new Map(entries.map(([, o]) => [`\`${flagLabel(o)}\``, o]));
  let rows = 0;
  for (const line of doc.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const o = byFlag.get(cells[3] ?? '');
    if (!o) continue;
    rows++;
    t.ok(cells[2]?.startsWith(o.default), `${cells[3]}: the doc says ${cells[2]}, the table ${o.default}`);
  }
  t.ok(rows >= 5, 'the limit tables were found');
});
