import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { localCluster, loopbackInstance, statesOf, tempDir, waitFor } from '../fixtures/helpers.js';
import type { ManagerEvent } from '../../../../src/actors/runner-supervisor/supervisor/runner-manager-options.js';

const taskStates = (events: readonly ManagerEvent[], id: string) =>
  events.flatMap((e) => (e.type === 'TaskStatusChanged' && e.taskId === id ? [e.status] : []));

t.test('tasks: acknowledged and run once, timed out, cancelled while queued or running', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'runs.txt');
  const { managers, events } = localCluster(t, ['a'], dir, { autoExec: false });
  const a = managers.get('a')!;
  const ev = events.get('a')!;
  a.instanceCreated(await loopbackInstance('tk', ['a'], { kind: 'exec', command: ['true'] }));
  await waitFor(() => statesOf(ev).includes('Ready'), 30_000, 'Ready');

  const append = { command: ['sh', '-c', `echo once >> ${out}`] };
  a.taskCreated({ taskId: 'dup', instanceId: 'tk', kind: 'exec', params: append });
  a.taskCreated({ taskId: 'dup', instanceId: 'tk', kind: 'exec', params: append });
  await waitFor(() => taskStates(ev, 'dup').includes('complete'), 10_000, 'dup complete');
  a.taskCreated({ taskId: 'dup', instanceId: 'tk', kind: 'exec', params: append });
  await new Promise((r) => setTimeout(r, 300));
  t.equal(readFileSync(out, 'utf8'), 'once\n', 'a task sent three times ran once');
  t.same(taskStates(ev, 'dup'), ['running', 'complete']);

  a.taskCreated({
    taskId: 'slow',
    instanceId: 'tk',
    kind: 'exec',
    params: { command: ['sleep', '30'] },
    timeoutMs: 300,
  });
  await waitFor(() => taskStates(ev, 'slow').includes('timed_out'), 10_000, 'timed out');
  t.same(
    taskStates(ev, 'slow'),
    ['running', 'timed_out'],
    'a task past its timeout is cancelled and reported timed_out',
  );

  a.taskCreated({ taskId: 'long', instanceId: 'tk', kind: 'exec', params: { command: ['sleep', '30'] } });
  await waitFor(() => taskStates(ev, 'long').includes('running'), 10_000, 'long running');
  const started = Date.now();
  await a.cancelTask('long');
  await waitFor(() => taskStates(ev, 'long').includes('cancelled'), 5_000, 'long cancelled');
  t.ok(Date.now() - started < 3000, 'cancel reached the runner and the command stopped within the bound');

  a.taskCreated({ taskId: 'blocker', instanceId: 'tk', kind: 'exec', params: { command: ['sleep', '2'] } });
  await a.cancelTask('never-sent');
  a.taskCreated({ taskId: 'never-sent', instanceId: 'tk', kind: 'exec', params: append });
  await waitFor(() => taskStates(ev, 'blocker').includes('complete'), 10_000, 'blocker done');
  t.same(taskStates(ev, 'never-sent'), [], 'a task cancelled before it arrived never runs');
  t.equal(readFileSync(out, 'utf8'), 'once\n');
  t.equal(a.runners()[0]!.failures, 0, 'none of this failed the runner');
});
