/**
 * The cluster credential: created on first start and saved 0600, reused after, replaced by a given one,
 * never the raw secret on the wire (keys are derived), refused in combination with --insecure-open; the durable
 * write helper really fsyncs.
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { ValidationError } from '../../src/protocols/errors.js';
import { parseNodeArgs } from '../../src/node/config.js';
import { deriveClusterKeys, resolveCredential, type CredentialInput } from '../../src/node/credentials.js';
import { API_TOKEN_FILE, SECRET_FILE, readApiTokenIn } from '../../src/protocols/data-dir-files.js';
import { realFs, writeFileAtomicSync, type DurableFs } from '../../src/native/durable-fs.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'torus-cred-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const input = (o: Partial<CredentialInput> = {}): CredentialInput => ({
  dataDir: join(tmp, `d${++n}`),
  cluster: 'torus',
  secret: undefined,
  secretSource: undefined,
  insecureOpen: false,
  apiToken: undefined,
  ...o,
});

t.test('first start creates a secret (0600) and an API token; the next start reuses them', async (t) => {
  const base = input();
  const events: string[] = [];
  const first = resolveCredential(base, (e) => events.push(e));
  if (first.mode !== 'secret') throw new Error('expected a secret');
  t.equal(first.source, 'created');
  t.same(events, ['created']);
  t.match(first.secret, /^torus-[A-Za-z0-9_-]{43}$/, '256 random bits, URL-safe');
  t.equal(statSync(join(base.dataDir, SECRET_FILE)).mode & 0o777, 0o600, 'secret file is 0600');
  t.equal(statSync(join(base.dataDir, API_TOKEN_FILE)).mode & 0o777, 0o600, 'token file is 0600');
  t.equal(readApiTokenIn(base.dataDir), first.apiToken, 'the local CLI finds the token');
  const second = resolveCredential(base);
  if (second.mode !== 'secret') throw new Error('expected a secret');
  t.equal(second.source, 'data-dir');
  t.equal(second.secret, first.secret, 'same secret after a restart');
  t.equal(second.apiToken, first.apiToken);
});

t.test('a given secret is saved and wins over the saved one; keys are derived, not the secret', async (t) => {
  const base = input();
  resolveCredential(base);
  const events: string[] = [];
  const given = resolveCredential({ ...base, secret: 'correct horse battery staple', secretSource: 'env' }, (e) =>
    events.push(e),
  );
  if (given.mode !== 'secret') throw new Error('expected a secret');
  t.same(events, ['replaced']);
  t.equal(readFileSync(join(base.dataDir, SECRET_FILE), 'utf8').trim(), 'correct horse battery staple');
  t.equal(given.source, 'env');
  const { peerKey, dataKey, apiToken } = given.keys;
  t.not(peerKey, dataKey, 'independent keys');
  t.notMatch(peerKey + dataKey + apiToken, /correct horse/, 'no key contains the secret');
  t.same(
    deriveClusterKeys('correct horse battery staple', 'torus'),
    given.keys,
    'deterministic: every node derives the same keys',
  );
  t.not(
    deriveClusterKeys('correct horse battery staple', 'other').peerKey,
    peerKey,
    'another cluster name, other keys',
  );
  t.not(deriveClusterKeys('correct horse battery stapler', 'torus').apiToken, apiToken);
});

t.test('--api-token-file replaces the derived token; --insecure-open has no credential', async (t) => {
  const own = resolveCredential(input({ apiToken: 'my-own-token-0123456789' }));
  t.equal(own.mode === 'secret' && own.apiToken, 'my-own-token-0123456789');
  const open = input({ insecureOpen: true });
  t.same(resolveCredential(open), { mode: 'open' });
  t.throws(() => statSync(join(open.dataDir, SECRET_FILE)), 'nothing saved in open mode');
});

t.test('config: TORUS_SECRET, precedence, warnings and conflicts', async (t) => {
  const env = { TORUS_SECRET: 'from-env' };
  t.match(parseNodeArgs([], env).config, { secret: 'from-env', secretSource: 'env' });
  t.match(parseNodeArgs(['--secret', 'flag'], env).config, { secret: 'flag', secretSource: 'flag' });
  const f = join(tmp, 'secret.txt');
  writeFileSync(f, 'from-file\n');
  t.match(parseNodeArgs(['--secret-file', f], env).config, { secret: 'from-file', secretSource: 'file' });
  t.match(parseNodeArgs([], {}).config, { secret: undefined, insecureOpen: false });
  t.throws(() => parseNodeArgs(['--insecure-open', '--secret', 'x'], {}), ValidationError);
  t.throws(
    () => parseNodeArgs(['--insecure-open'], env),
    ValidationError,
    'TORUS_SECRET with --insecure-open is a conflict too',
  );
  writeFileSync(f, '');
  t.throws(() => parseNodeArgs(['--secret-file', f], {}), /is empty/);
  const short = join(tmp, 'short-token');
  writeFileSync(short, 'abc\n');
  t.throws(() => parseNodeArgs(['--api-token-file', short], {}), /at least 16/);
});

t.test('writeFileAtomicSync fsyncs the file and its directory, leaves no temp file, sets the mode', async (t) => {
  const calls: string[] = [];
  const counting: DurableFs = {
    ...realFs,
    fsyncSync: (fd) => {
      calls.push('fsync');
      realFs.fsyncSync(fd);
    },
    renameSync: (a, b) => {
      calls.push('rename');
      realFs.renameSync(a, b);
    },
  };
  const dir = join(tmp, 'atomic');
  const path = join(dir, 'f.json');
  writeFileAtomicSync(path, '{"a":1}\n', { fs: counting, mode: 0o600 });
  t.same(calls, ['fsync', 'rename', 'fsync'], 'file fsync before the rename, directory fsync after');
  t.equal(readFileSync(path, 'utf8'), '{"a":1}\n');
  t.equal(statSync(path).mode & 0o777, 0o600);
  t.equal(statSync(dir).mode & 0o777, 0o700, 'a created directory is 0700');
  const failing: DurableFs = {
    ...realFs,
    fsyncSync: () => {
      throw Object.assign(new Error('EIO'), { code: 'EIO' });
    },
  };
  t.throws(() => writeFileAtomicSync(path, 'new', { fs: failing }), /EIO/);
  t.equal(readFileSync(path, 'utf8'), '{"a":1}\n', 'a failed write leaves the old content');
});

t.test(
  '`token` prints the join command and the API token from the data dir',
  { skip: skipOrFail(existsSync(MAIN) ? undefined : 'dist/main.js missing (npm run build)') },
  async (t) => {
    const base = input();
    const cred = resolveCredential(base);
    if (cred.mode !== 'secret') throw new Error('expected a secret');
    const join1 = spawnSync(process.execPath, [MAIN, 'token', '--data-dir', base.dataDir], { encoding: 'utf8' });
    t.equal(join1.status, 0);
    t.match(join1.stdout, new RegExp(`^TORUS_SECRET=${cred.secret} node dist/main.js --peers \\S+:52515\\n$`));
    const api = spawnSync(process.execPath, [MAIN, 'token', '--api', '--data-dir', base.dataDir], { encoding: 'utf8' });
    t.equal(api.stdout, `${cred.apiToken}\n`);
    const none = spawnSync(process.execPath, [MAIN, 'token', '--data-dir', join(tmp, 'empty')], { encoding: 'utf8' });
    t.equal(none.status, 1);
    t.match(none.stderr, /no cluster secret/);
  },
);
