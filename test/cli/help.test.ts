/**
 * `node dist/main.js --help` names every command a user can type: its Commands section is exactly the command
 * table main.ts dispatches on (src/cli/command-table.ts), and each listed command really runs (its own --help).
 * Uses dist: `npm run build` first (npm test does).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { COMMAND_LIST } from '../../src/cli/command-table.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const run = (args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 60_000 });

t.test('--help lists the command table, no more and no less', async (t) => {
  const help = run(['--help']);
  t.equal(help.status, 0);
  const section = help.stdout.slice(help.stdout.indexOf('Commands'));
  const listed = [...section.matchAll(/^ {2}(\S+) {2,}/gm)].map((m) => m[1]);
  t.same(
    listed,
    COMMAND_LIST.map((c) => c.name),
    'every command, in the table order',
  );
  for (const name of ['artifacts', 'members', 'bench', 'token']) t.ok(listed.includes(name), `${name} is named`);
});

t.test('every listed command runs (its --help exits 0)', async (t) => {
  for (const { name } of COMMAND_LIST) {
    const args = name === 'bench' ? ['bench', 'ring', '--help'] : [name, '--help'];
    const res = run(args);
    t.equal(res.status, 0, `${args.join(' ')} exits 0`);
    t.notMatch(res.stderr, /unknown command/, `${name} is dispatched`);
  }
  const unknown = run(['no-such-command']);
  t.equal(unknown.status, 2, 'an unknown command exits 2');
  t.match(unknown.stderr, /unknown command "no-such-command"[\s\S]*Commands/, 'and shows the commands');
});
