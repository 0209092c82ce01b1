/**
 * Output a job wrote is on disk when its end is reported: a reader that stops there (run, follow=1) misses none of
 * it, even when this process is slow to read the pipes (a loaded machine: here a loop blocked 60 ms at a time).
 * Two ends: the runner dies (the job writes 1 MB, then kills its runner at once, so the last of it is still in the
 * pipe at the exit), and the command exits while its runner lives on (its outcome travels on the frame channel, its
 * output on the pipes). A process the command leaves behind holding the pipes open does not hold the outcome back.
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import {
  RunnerProcess,
  type RunnerProcessEvent,
} from '../../../../src/actors/runner-supervisor/supervisor/runner-process.js';
import { execRunnerConfig, tempDir, waitFor } from '../fixtures/helpers.js';

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

const onDisk = (logDir: string, stream: string): number =>
  readdirSync(logDir)
    .filter((f) => f.startsWith(stream))
    .reduce((sum, f) => sum + readFileSync(join(logDir, f)).length, 0);

/** A runner taken to Ready, its events recorded; `atOutcome` runs when the exec task's outcome is reported. */
async function readyRunner(t: Test, dir: string, command: string[], atOutcome: (e: RunnerProcessEvent) => void) {
  const events: RunnerProcessEvent[] = [];
  const proc = new RunnerProcess({
    config: execRunnerConfig(dir, command),
    logDir: join(dir, 'logs'),
    onEvent: (e) => {
      events.push(e);
      if (e.type === 'task-status' && e.taskId === 't' && e.status !== 'running') atOutcome(e);
    },
  });
  t.teardown(() => proc.shutdown({ gracefulMs: 100, termMs: 100, killMs: 100 }));
  proc.start();
  for (const [type, state] of [
    ['connect', 'Connected'],
    ['load', 'Loaded'],
    ['warmup', 'Ready'],
  ] as const) {
    await proc.startTask({ type, taskId: type });
    await waitFor(() => proc.status.state === state, 60_000, state);
  }
  return { proc, events };
}

t.test('every byte the command wrote is on disk when its exit is reported, its runner still up', async (t) => {
  const err = 200_000;
  for (let round = 0; round < 4; round++) {
    const dir = tempDir(t);
    const logDir = join(dir, 'logs');
    const seen: Array<{ status: string; stdout: number; stderr: number }> = [];
    const command = [
      'sh',
      '-c',
      `head -c ${BYTES} /dev/zero | tr '\\0' x; head -c ${err} /dev/zero | tr '\\0' y >&2; exit 3`,
    ];
    const { proc } = await readyRunner(t, dir, command, (e) =>
      seen.push({
        status: e.type === 'task-status' ? e.status : e.type,
        stdout: onDisk(logDir, 'stdout'),
        stderr: onDisk(logDir, 'stderr'),
      }),
    );
    const stop = slowLoop();
    void proc.startTask({ type: 'task', taskId: 't', op: 'exec', params: {} });
    await waitFor(() => seen.length > 0, 60_000, 'the outcome');
    stop();
    t.same(
      seen,
      [{ status: 'failed', stdout: BYTES, stderr: err }],
      `round ${round}: all output on disk at the outcome`,
    );
    t.equal(proc.exit, undefined, `round ${round}: the runner lives on`);
  }
});

t.test('a process the command left holding its pipes open does not hold its outcome back', async (t) => {
  const dir = tempDir(t);
  const pidFile = join(dir, 'left.pid');
  // The background sleep inherits the command's stdout and stderr: they stay open after the command exits.
  const command = ['sh', '-c', `echo last; sleep 60 & echo $! > ${pidFile}; exit 0`];
  let outcome: { status: string; leftAlive: boolean; log: string } | undefined;
  const { proc } = await readyRunner(t, dir, command, (e) => {
    const left = Number(readFileSync(pidFile, 'utf8'));
    let leftAlive = true;
    try {
      process.kill(left, 0);
    } catch {
      leftAlive = false;
    }
    const log = readdirSync(join(dir, 'logs'))
      .filter((f) => f.startsWith('stdout'))
      .map((f) => readFileSync(join(dir, 'logs', f), 'utf8'))
      .join('');
    outcome = { status: e.type === 'task-status' ? e.status : e.type, leftAlive, log };
  });
  void proc.startTask({ type: 'task', taskId: 't', op: 'exec', params: {} });
  await waitFor(() => outcome !== undefined, 30_000, 'the outcome');
  t.same(outcome, { status: 'complete', leftAlive: true, log: 'last\n' }, 'reported while the leftover still runs');
  await proc.shutdown({ gracefulMs: 2000, termMs: 1000, killMs: 1000 });
  // Gone, or a zombie not reaped yet (its parent shell exited long ago).
  const state = (): string => {
    try {
      return readFileSync(`/proc/${readFileSync(pidFile, 'utf8').trim()}/stat`, 'utf8').split(') ')[1]![0]!;
    } catch {
      return 'gone';
    }
  };
  await waitFor(() => state() === 'gone' || state() === 'Z', 10_000, 'the leftover to end');
  t.pass('the leftover went with its runner (group kill)');
});

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
    t.equal(onDisk(logDir, 'stdout'), BYTES, `round ${round}: all ${BYTES} bytes on disk at the exit`);
  }
});
