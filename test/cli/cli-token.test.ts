/**
 * The CLI's API token: `--token`, else env TORUS_TOKEN, else `<data-dir>/api-token` (data dir from
 * `--data-dir`, else TORUS_DATA_DIR, else ~/.torus). Without one, or with a wrong one, the node answers 401 and
 * the CLI says so, naming every place it looked.
 */
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findApiToken } from '../../src/cli/api-client.js';
import { runStatusCommand } from '../../src/cli/status.js';
import { startApi, TEST_TOKEN } from '../api/fixtures/harness.js';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } },
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

const saved = { token: process.env.TORUS_TOKEN, dir: process.env.TORUS_DATA_DIR };
t.teardown(() => {
  for (const [k, v] of [
    ['TORUS_TOKEN', saved.token],
    ['TORUS_DATA_DIR', saved.dir],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

t.test('lookup order: --token, TORUS_TOKEN, <data-dir>/api-token', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'torus-cli-token-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'api-token'), 'tt_from-file\n', { mode: 0o600 });
  t.same(findApiToken({ token: 'tt_flag', dataDir: dir }, { TORUS_TOKEN: 'tt_env' }).token, 'tt_flag', '--token first');
  t.same(findApiToken({ dataDir: dir }, { TORUS_TOKEN: 'tt_env' }).token, 'tt_env', 'then TORUS_TOKEN');
  t.same(findApiToken({ dataDir: dir }, {}).token, 'tt_from-file', 'then --data-dir/api-token');
  t.same(findApiToken({}, { TORUS_DATA_DIR: dir }).token, 'tt_from-file', 'then TORUS_DATA_DIR/api-token');
  const none = findApiToken({}, { TORUS_DATA_DIR: join(dir, 'nope') });
  t.equal(none.token, undefined);
  t.same(none.lookedIn, [
    '--token (not given)',
    'TORUS_TOKEN (not set)',
    `${join(dir, 'nope', 'api-token')} (none there)`,
  ]);
});

t.test('against a node: the token found is sent; without one, 401 explained', async (t) => {
  const { api } = await startApi(t);
  const dir = await mkdtemp(join(tmpdir(), 'torus-cli-token-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  delete process.env.TORUS_TOKEN;
  process.env.TORUS_DATA_DIR = join(dir, 'empty');

  const none = io();
  t.equal(await runStatusCommand(['--api', api.url], none.io), 1, 'no token: exit 1');
  t.match(none.err(), /needs an API token and none was found/);
  t.match(
    none.err(),
    `--token (not given), TORUS_TOKEN (not set), ${join(dir, 'empty', 'api-token')} (none there)`,
    'says where it looked',
  );
  t.match(none.err(), /token --api/, 'and how to get one');

  const wrong = io();
  t.equal(await runStatusCommand(['--api', api.url, '--token', 'tt_wrong-token'], wrong.io), 1);
  t.match(wrong.err(), /refused the API token.*Looked in: --token/);

  const flag = io();
  t.equal(await runStatusCommand(['--api', api.url, '--token', TEST_TOKEN], flag.io), 0, flag.err());

  await writeFile(join(dir, 'api-token'), `${TEST_TOKEN}\n`, { mode: 0o600 });
  const file = io();
  t.equal(
    await runStatusCommand(['--api', api.url, '--data-dir', dir], file.io),
    0,
    `found in --data-dir: ${file.err()}`,
  );
  process.env.TORUS_DATA_DIR = dir;
  const env = io();
  t.equal(await runStatusCommand(['--api', api.url, '--json'], env.io), 0, `found in TORUS_DATA_DIR: ${env.err()}`);
  t.match(JSON.parse(env.out()), { node: { id: 'node-a' } });
});
