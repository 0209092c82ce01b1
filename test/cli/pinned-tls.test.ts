/**
 * `known-api-hosts` fails closed: only a missing file means "nothing pinned yet". A file the CLI cannot read (a
 * directory in its place, EACCES after a run under sudo) or a line it cannot parse refuses the connection with a
 * message naming the file, sends nothing, and leaves the file as it was; a first use keeps every other host's pin.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { loadNodeCert } from '../../src/api/tls/node-cert.js';
import { ApiClient } from '../../src/cli/api-client.js';
import { KNOWN_HOSTS_FILE } from '../../src/cli/pinned-tls.js';
import { TorusError } from '../../src/protocols/errors.js';
import { startApi, TEST_TOKEN } from '../api/fixtures/harness.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const TOKEN = { token: TEST_TOKEN, lookedIn: ['--token'] };
const OTHER_PINS = [
  `10.77.0.2:52515 ${'AB:'.repeat(31)}AB`,
  '# the desk box',
  `[fd00::3]:52515 ${'CD:'.repeat(31)}CD`,
].join('\n');

function tempDir(t: { teardown(fn: () => unknown): void }, mode = 0o700): string {
  const dir = mkdtempSync(join(tmpdir(), 'torus-pins-'));
  chmodSync(dir, mode);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A TLS node on loopback that records every request reaching it (after TLS, before routing). */
async function tlsNode(t: Parameters<typeof startApi>[0]) {
  const cert = loadNodeCert({ dataDir: tempDir(t), nodeId: 'node-a' });
  const seen: string[] = [];
  const probeHandler = (req: IncomingMessage, _res: ServerResponse): boolean => {
    seen.push(req.url ?? '');
    return false;
  };
  const { api } = await startApi(t, { tls: cert, probeHandler });
  return { url: api.secureUrl!, address: `127.0.0.1:${api.port}`, fingerprint: cert.fingerprint, seen };
}

function refusal(fn: () => unknown): TorusError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TorusError) return error;
    throw error;
  }
  throw new Error('expected the client to refuse');
}

t.test('a directory in place of known-api-hosts: refused, naming the file, nothing sent', async (t) => {
  const node = await tlsNode(t);
  const dir = tempDir(t);
  const file = join(dir, KNOWN_HOSTS_FILE);
  mkdirSync(file);
  const e = refusal(() => new ApiClient(node.url, TOKEN, { dataDir: dir, env: {} }));
  t.equal(e.code, 'TORUS_CONFIG_INVALID');
  t.match(e.message, `cannot read the pinned API certificates in ${file} (EISDIR)`);
  t.match(e.message, /is a directory; remove it/);
  t.ok(statSync(file).isDirectory(), 'left as it was');
  t.same(node.seen, [], 'nothing reached the node');

  // --fingerprint does not need the file: the pin is given.
  const given = new ApiClient(node.url, TOKEN, { dataDir: dir, env: {}, fingerprint: node.fingerprint });
  t.equal((await given.get<{ id: string }>('/v1/node')).id, 'node-a');
});

t.test('a malformed line anywhere, or a damaged pin for this address: refused with file and line', async (t) => {
  const node = await tlsNode(t);
  const dir = tempDir(t);
  const file = join(dir, KNOWN_HOSTS_FILE);
  for (const [bad, line] of [
    [`${OTHER_PINS}\n${node.address} 12:34`, 4],
    [`${OTHER_PINS}\n${node.address}`, 4],
    [`garbage\n${OTHER_PINS}`, 1],
    [`${OTHER_PINS}\n${node.address} ${node.fingerprint} trailing`, 4],
  ] as const) {
    writeFileSync(file, `${bad}\n`, { mode: 0o600 });
    const e = refusal(() => new ApiClient(node.url, TOKEN, { dataDir: dir, env: {} }));
    t.equal(e.code, 'TORUS_CONFIG_INVALID');
    t.match(e.message, `${file} line ${line} is not "host:port SHA256-FINGERPRINT"`, JSON.stringify(bad));
    t.equal(readFileSync(file, 'utf8'), `${bad}\n`, 'the file is left as it was');
  }
  t.same(node.seen, [], 'nothing reached the node');
});

t.test('first use pins this address and keeps every other line (comments too)', async (t) => {
  const node = await tlsNode(t);
  const dir = tempDir(t);
  const file = join(dir, KNOWN_HOSTS_FILE);
  writeFileSync(file, `${OTHER_PINS}\n${node.address} ${'EF:'.repeat(31)}EF\n`, { mode: 0o600 });
  // A stale pin for this address is a mismatch, not a first use.
  const stale = new ApiClient(node.url, TOKEN, { dataDir: dir, env: {} });
  await t.rejects(stale.get('/v1/node'), { code: 'TORUS_TLS_FINGERPRINT_MISMATCH' });
  writeFileSync(file, `${OTHER_PINS}\n`, { mode: 0o600 });
  const client = new ApiClient(node.url, TOKEN, { dataDir: dir, env: {} });
  t.equal((await client.get<{ id: string }>('/v1/node')).id, 'node-a');
  t.equal(readFileSync(file, 'utf8'), `${OTHER_PINS}\n${node.address} ${node.fingerprint}\n`);
});

/** `torus status` over TLS in a child process, as `uid` (root's tests run it as nobody) or as this user. */
/** The first directory on the way to `file` that another user cannot search, or the file itself when it cannot run. */
function closedToOthers(file: string): string | undefined {
  const parts = file.split('/').filter(Boolean);
  for (let i = 1; i < parts.length; i++) {
    const dir = `/${parts.slice(0, i).join('/')}`;
    if ((statSync(dir).mode & 0o001) === 0) return `${dir} (mode ${(statSync(dir).mode & 0o777).toString(8)})`;
  }
  return (statSync(file).mode & 0o001) === 0 ? file : undefined;
}

function cliStatus(
  url: string,
  dataDir: string,
  uid: number | undefined,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const cli = [MAIN, 'status', '--api', url, '--data-dir', dataDir, '--token', TEST_TOKEN];
    // Through env -u NODE_OPTIONS: tap's process-info hook rides on it, and as nobody it could not write its record.
    const child = execFile(
      'env',
      ['-u', 'NODE_OPTIONS', process.execPath, ...cli],
      { ...(uid === undefined ? {} : { uid, gid: uid }), env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 },
      (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
    );
  });
}

t.test('EACCES (a file written under sudo): the CLI refuses and never rewrites the file', async (t) => {
  const node = await tlsNode(t);
  const isRoot = process.getuid?.() === 0;
  // As root the CLI runs as nobody, on this very Node binary: a Node unpacked under a 0700 directory (mktemp -d)
  // cannot run as nobody, and the test would only see `Permission denied` from env.
  const closed = isRoot ? closedToOthers(process.execPath) : undefined;
  if (closed !== undefined) {
    t.fail(
      `nobody (uid 65534) cannot run ${process.execPath}: ${closed} is closed to other users; open it (chmod o+x)`,
    );
    return;
  }
  // The data dir is writable by the CLI's user (its own ~/.torus), the file in it is not readable by that user:
  // as root, the file is root's 0600 and the CLI runs as nobody; otherwise the file is chmod 000.
  const dir = tempDir(t, 0o777);
  const file = join(dir, KNOWN_HOSTS_FILE);
  writeFileSync(file, `${OTHER_PINS}\n`, { mode: 0o600 });
  if (!isRoot) chmodSync(file, 0o000);
  const { code, stderr } = await cliStatus(node.url, dir, isRoot ? 65_534 : undefined);
  if (!isRoot) chmodSync(file, 0o600);
  t.equal(code, 1, stderr);
  t.match(stderr, `cannot read the pinned API certificates in ${file} (EACCES)`);
  t.match(stderr, /sudo chown/);
  t.equal(readFileSync(file, 'utf8'), `${OTHER_PINS}\n`, 'the other hosts are still pinned: nothing rewrote the file');
  t.same(node.seen, [], 'nothing reached the node');
});
