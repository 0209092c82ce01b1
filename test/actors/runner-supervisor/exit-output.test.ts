/**
 * Output a runner's job wrote just before the runner died is on disk when the exit is reported: a reader that stops
 * at the exit (run, follow=1) misses none of it, even when this process is slow to read the pipes (a loaded
 * machine: here a loop blocked 60 ms at a time). The job writes 1 MB, then kills its runner at once, so the last of it is still in the pipe at the exit.
 */
import t from 'tap';
import { join } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { RunnerProcess } from '../../../src/actors/runner-supervisor/runners/runner-process.js';
import { execRunnerConfig, tempDir, waitFor } from './fixtures/helpers.js';

const BYTES = 1_000_000;

// $PPID is the runner: it dies with the job's last bytes still in flight.
const config = (dir: string) =>
  execRunnerConfig(dir, ['sh', '-c', `head -c ${BYTES} /dev/zero | tr '\\0' x; kill -9 $PPID`]);

/** Blocks this process's event loop for most of every few milliseconds, as a busy machine would. */
function slowLoop(): () => void {
  const timer = setInterval(() => {
    const until = Date.now() + 60;
    while (Date.now() < until) {}
  }, 65);
  return () => clearInterval(timer);
}

t.test('every byte the job wrote before its runner died is in the log when the exit is reported', async (t) => {
  for (let round = 0; round < 4; round++) {
    const dir = tempDir(t);
    const logDir = join(dir, 'logs');
    const proc = new RunnerProcess({ config: config(dir), logDir, onEvent: () => {} });
    t.teardown(() => proc.shutdown({ gracefulMs: 100, termMs: 100, killMs: 100 }));
    proc.start();
    t.ok(await proc.startTask({ type: 'connect', taskId: 'c' }));
    await waitFor(() => proc.status.state === 'Connected');
    await proc.startTask({ type: 'load', taskId: 'l' });
    await waitFor(() => proc.status.state === 'Loaded');
    await proc.startTask({ type: 'warmup', taskId: 'w' });
    await waitFor(() => proc.status.state === 'Ready');
    const stop = slowLoop();
    void proc.startTask({ type: 'task', taskId: 't', op: 'exec', params: {} });
    const exit = await proc.exited;
    stop();
    t.equal(exit.signal, 'SIGKILL', `round ${round}: the runner was killed by its job`);
    const onDisk = readdirSync(logDir)
      .filter((f) => f.startsWith('stdout'))
      .reduce((sum, f) => sum + readFileSync(join(logDir, f)).length, 0);
    t.equal(onDisk, BYTES, `round ${round}: all ${BYTES} bytes on disk at the exit`);
  }
});
