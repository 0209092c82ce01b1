import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { childExecArgv } from '../../../src/runtime/module-url.js';
import { allGone, freePorts, tempDir, waitFor } from './fixtures/helpers.js';

t.test(
  'no runner outlives its node: kill -9 the supervising process, its runners and their commands exit',
  async (t) => {
    const dir = tempDir(t);
    const pidFile = join(dir, 'cmd.pid');
    const [port] = await freePorts(1);
    const host = spawn(
      process.execPath,
      [
        ...childExecArgv(import.meta.url),
        new URL('./fixtures/host-with-runners.ts', import.meta.url).pathname,
        dir,
        pidFile,
        String(port),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    t.teardown(() => {
      try {
        host.kill('SIGKILL');
      } catch {
        /* gone */
      }
    });
    let out = '';
    host.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    await waitFor(() => out.includes('"runner"'), 90_000, 'runner running');
    const runner = (JSON.parse(out.split('\n')[0]!) as { runner: number }).runner;
    await waitFor(
      () => {
        try {
          return readFileSync(pidFile, 'utf8').trim() !== '';
        } catch {
          return false;
        }
      },
      10_000,
      'command pid',
    );
    const command = Number(readFileSync(pidFile, 'utf8'));
    host.kill('SIGKILL');
    const left = await allGone([runner, command], 10_000);
    t.same(left, [], `runner ${runner} and command ${command} exited after their node was killed`);
    if (left.length)
      for (const pid of left)
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          /* gone */
        }
  },
);
