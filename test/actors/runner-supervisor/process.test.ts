import t from 'tap';
import { segmentName } from '../../../src/actors/runner-supervisor/shared/log-segments.js';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import {
  RunnerProcess,
  type RunnerProcessEvent,
} from '../../../src/actors/runner-supervisor/supervisor/runner-process.js';
import { formatRunnerStatus } from '../../../src/protocols/runner-status.js';
import { allGone, execRunnerConfig, tempDir, waitFor } from './fixtures/helpers.js';

const config = (dir: string, command: string[]) => execRunnerConfig(dir, command, { TORUS_RANK: '0', MY_VAR: 'hello' });

t.test('exec runner: canonical sequence, task once, logs, clean exit', async (t) => {
  const dir = tempDir(t);
  const log: string[] = [];
  const proc = new RunnerProcess({
    config: config(dir, ['sh', '-c', 'echo "rank=$TORUS_RANK var=$MY_VAR"; echo oops >&2']),
    logDir: join(dir, 'logs'),
    onEvent: (e: RunnerProcessEvent) => {
      if (e.type === 'status') log.push(formatRunnerStatus(e.status));
      else if (e.type === 'task-status') log.push(`${e.taskId} ${e.status}`);
    },
  });
  t.teardown(() => proc.shutdown({ gracefulMs: 100, termMs: 100, killMs: 100 }));
  proc.start();
  const pid = proc.pid!;
  t.ok(await proc.startTask({ type: 'connect', taskId: 'c' }));
  await waitFor(() => proc.status.state === 'Connected');
  t.ok(await proc.startTask({ type: 'load', taskId: 'l' }));
  await waitFor(() => proc.status.state === 'Loaded');
  await proc.startTask({ type: 'warmup', taskId: 'w' });
  await waitFor(() => proc.status.state === 'Ready');
  await proc.startTask({ type: 'task', taskId: 't', op: 'exec', params: {} });
  await proc.startTask({ type: 'task', taskId: 't', op: 'exec', params: {} });
  await waitFor(() => log.includes('t complete'));
  await waitFor(() => proc.status.state === 'Ready');
  const exit = await proc.shutdown();
  t.ok(exit.expected, 'clean exit');
  t.equal(exit.code, 0);
  t.same(log, [
    'Idle',
    'c running',
    'Connecting',
    'c complete',
    'Connected',
    'l running',
    'Loading(0/2)',
    'Loading(2/2)',
    'l complete',
    'Loaded',
    'w running',
    'WarmingUp',
    'w complete',
    'Ready',
    't running',
    'Running',
    't complete',
    'Ready',
    'shutdown:i1@a running',
    'ShuttingDown',
    'shutdown:i1@a complete',
    'Shutdown',
  ]);
  t.match(readFileSync(join(dir, 'logs', segmentName('stdout', 0)), 'utf8'), 'rank=0 var=hello');
  t.match(readFileSync(join(dir, 'logs', segmentName('stderr', 0)), 'utf8'), 'oops');
  t.same(JSON.parse(readFileSync(join(dir, 'hostfile.json'), 'utf8')), [['0.0.0.0:50000']]);
  t.same(await allGone([pid]), [], 'runner gone');
});
