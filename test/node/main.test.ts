import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readApiTokenIn } from '../../src/protocols/data-dir-files.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

interface Started {
  child: ChildProcess;
  port: number;
  nodeId: string;
  stderr: () => string;
}

function startNode(dataDir: string, extra: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<Started> {
  const child = spawn(
    process.execPath,
    [MAIN, '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--no-mdns', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node did not start in time; stderr: ${err}`));
    }, 60_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /torus node (\S+) \(incarnation \d+\) listening on [^:]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, nodeId: m[1]!, port: Number(m[2]), stderr: () => err });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`node exited with ${code} before listening; stderr: ${err}`));
    });
  });
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

t.test('node dist/main.js starts, answers, stops on SIGTERM, and keeps its id across restarts', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'torus-main-'));
  const children: ChildProcess[] = [];
  t.teardown(() => {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  const first = await startNode(dataDir);
  children.push(first.child);
  const base = `http://127.0.0.1:${first.port}`;
  t.equal(await (await fetch(`${base}/node_id`)).json(), first.nodeId, 'GET /node_id answers the id it printed');
  t.equal((await fetch(`${base}/v1/node`)).status, 401, 'the rest of the API needs the token');
  // The token as the CLI on this machine finds it: the file the node saved in its data dir.
  const auth = { authorization: `Bearer ${readApiTokenIn(dataDir)}` };
  type NodeInfo = { id: string; incarnation: number; quorum?: { ok?: boolean; members?: number }; security?: unknown };
  // Listening comes before the lone node has elected itself: wait (bounded) for its quorum, then judge it.
  let info = (await (await fetch(`${base}/v1/node`, { headers: auth })).json()) as NodeInfo;
  for (
    const end = Date.now() + 15_000;
    !(info.quorum?.ok === true && info.quorum.members === 1) && Date.now() < end;
  ) {
    await new Promise((r) => setTimeout(r, 100));
    info = (await (await fetch(`${base}/v1/node`, { headers: auth })).json()) as NodeInfo;
  }
  t.equal(info.id, first.nodeId);
  t.same(info.security, { mode: 'secret', secretSource: 'created' }, 'a first start creates the cluster secret');
  t.match(info.quorum, { ok: true, members: 1, reached: 1, needed: 1 }, 'a lone node has its own quorum');
  const stateRes = await fetch(`${base}/v1/state`, { headers: auth });
  t.equal(stateRes.status, 200, 'the topology keeper answers');

  const stopping = Date.now();
  first.child.kill('SIGTERM');
  const exit = await exitOf(first.child);
  t.same(exit, { code: 0, signal: null }, 'SIGTERM: clean exit 0');
  t.ok(Date.now() - stopping < 10_000, 'within a few seconds');
  t.notMatch(first.stderr(), /unhandled|ClosedResourceError|TypeError/i, 'nothing ugly on stderr');

  const second = await startNode(dataDir);
  children.push(second.child);
  t.equal(second.nodeId, first.nodeId, 'the node id survives a restart');
  const again = (await (await fetch(`http://127.0.0.1:${second.port}/v1/node`, { headers: auth })).json()) as {
    incarnation: number;
  };
  t.equal(again.incarnation, info.incarnation + 1, 'with a new incarnation');
  second.child.kill('SIGINT');
  t.same(await exitOf(second.child), { code: 0, signal: null }, 'SIGINT: clean exit 0');
});

t.test(
  'SIGTERM while the node is still starting: it finishes starting, then shuts down in order (exit 0)',
  { skip: process.platform !== 'linux' ? 'reads /proc' : false },
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'torus-main-'));
    const child = spawn(
      process.execPath,
      [MAIN, '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--no-mdns'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    t.teardown(() => {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
    });
    // Wait until actor worker threads are being created (only startNode creates them, after the signal handlers are
    // installed) while the node has not yet printed that it listens: start-up is running. A bare node has ≤ 11 threads.
    const threads = (): number => {
      try {
        return readdirSync(`/proc/${child.pid}/task`).length;
      } catch {
        return 0;
      }
    };
    const deadline = Date.now() + 30_000;
    while (threads() < 13 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    t.notMatch(out, /listening/, 'the signal arrives during start-up');
    child.kill('SIGTERM');
    t.same(await exitOf(child), { code: 0, signal: null }, 'clean exit 0, not killed half-started');
    t.match(err, /SIGTERM, shutting down/);
    t.match(out, /listening/, 'it finished starting first');
  },
);

t.test('bad flags are refused with a clear message and exit 2', async (t) => {
  for (const [args, pattern] of [
    [['--port', 'abc'], /--port: expected a port number/],
    [['--iface-type', 'eth0=fast'], /unknown interface type "fast"/],
    [['--peers', 'nohost'], /expected host:port/],
    [['--bogus'], /Unknown option '--bogus'/],
  ] as const) {
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const exit = await exitOf(child);
    t.equal(exit.code, 2, `${args.join(' ')} → exit 2`);
    t.match(err, pattern);
  }
});

t.test('--help prints the usage', async (t) => {
  const child = spawn(process.execPath, [MAIN, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  t.equal((await exitOf(child)).code, 0);
  t.match(out, /--data-dir DIR/);
  t.match(out, /--iface-type NAME=TYPE/);
});

t.test(
  'on Linux a node replaces itself (same pid) with MALLOC_ARENA_MAX=2; a value the operator set is kept',
  {
    skip:
      process.platform !== 'linux'
        ? 'reads /proc'
        : typeof (process as { execve?: unknown }).execve !== 'function'
          ? `process.execve needs Node 22.15 or later (this is ${process.version})`
          : false,
  },
  async (t) => {
    const environOf = (pid: number): string[] => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    for (const [preset, expected] of [
      [undefined, '2'],
      ['8', '8'],
      ['0', '0'],
    ] as const) {
      const dataDir = mkdtempSync(join(tmpdir(), 'torus-main-'));
      const env = { ...process.env };
      delete env.MALLOC_ARENA_MAX;
      if (preset !== undefined) env.MALLOC_ARENA_MAX = preset;
      const node = await startNode(dataDir, ['--insecure-open'], env);
      t.teardown(() => {
        node.child.kill('SIGKILL');
        rmSync(dataDir, { recursive: true, force: true });
      });
      t.ok(
        environOf(node.child.pid!).includes(`MALLOC_ARENA_MAX=${expected}`),
        `started with ${preset ?? 'none'}: the node process (pid ${node.child.pid}) runs with ${expected}`,
      );
      node.child.kill('SIGTERM');
      t.same(await exitOf(node.child), { code: 0, signal: null }, 'and exits cleanly on SIGTERM');
    }
  },
);
