/**
 * `artifacts add` returns 0 only once the node it talks to knows the artifact (its announce answers after its own
 * state shows the holding), so `add && broadcast` works. When the node refuses or cannot apply it in time, the
 * artifact is stored here but the command says the cluster does not know it yet and exits 1; with no node running
 * on this machine, there is nobody to tell now: a note, exit 0 (the node announces its store when it starts).
 */
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runArtifactsCommand } from '../../src/cli/artifacts.js';
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

function workDir(t: { teardown(fn: () => unknown): void }): { dataDir: string; src: string } {
  const root = mkdtempSync(join(tmpdir(), 'torus-cli-add-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const src = join(root, 'weights');
  mkdirSync(src);
  writeFileSync(join(src, 'w.bin'), 'weights');
  return { dataDir: join(root, 'data'), src };
}

t.test(
  'the node cannot take the announcement: stored here, but exit 1 saying the cluster does not know it',
  async (t) => {
    const { api } = await startApi(t); // an in-process node without an artifact service: the announce gets 503
    const { dataDir, src } = workDir(t);
    const o = io();
    const code = await runArtifactsCommand(
      ['add', src, '--api', api.url, '--token', TEST_TOKEN, '--data-dir', dataDir],
      o.io,
    );
    t.equal(code, 1, o.err());
    t.match(o.out(), /^[0-9a-f]{64}\n$/, 'the id is printed: the store holds it');
    t.match(
      o.err(),
      /stored on this machine, but the cluster does not know it yet: this node runs no artifact service/,
    );
  },
);

t.test('no node running here: a note, exit 0 (it announces the store when it starts)', async (t) => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as { port: number }).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const { dataDir, src } = workDir(t);
  const o = io();
  const code = await runArtifactsCommand(
    ['add', src, '--api', `http://127.0.0.1:${port}`, '--token', TEST_TOKEN, '--data-dir', dataDir],
    o.io,
  );
  t.equal(code, 0, o.err());
  t.match(o.err(), /note: cannot reach the node API .*; the node announces the artifact when it next starts/);
});
