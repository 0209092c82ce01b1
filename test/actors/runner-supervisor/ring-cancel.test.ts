import t from 'tap';
import { localCluster, loopbackInstance, statesOf, tempDir, waitFor } from './fixtures/helpers.js';

t.test('a cancelled ring collective: cancelled, the ring is set up again, later tasks run', async (t) => {
  const dir = tempDir(t);
  const { managers, events } = localCluster(t, ['a', 'b'], dir, {
    policy: { initialDelayMs: 100, factor: 2, maxDelayMs: 1000, maxRestarts: 5, periodMs: 60_000 },
  });
  const instance = await loopbackInstance('cx', ['a', 'b'], { kind: 'ring' });
  for (const m of managers.values()) m.instanceCreated(instance);
  const ready = (n: string) => statesOf(events.get(n)!).filter((s) => s === 'Ready').length;
  await waitFor(() => ready('a') >= 1 && ready('b') >= 1, 90_000, 'both Ready');
  // Only rank 0 gets the task: it waits in the collective for rank 1, which never joins; then it is cancelled.
  managers.get('a')!.taskCreated({ taskId: 'stuck', instanceId: 'cx', kind: 'all-reduce', params: { count: 1000 } });
  await waitFor(() => statesOf(events.get('a')!).includes('Running'), 20_000, 'rank 0 Running');
  await managers.get('a')!.cancelTask('stuck');
  await waitFor(
    () =>
      events.get('a')!.some((e) => e.type === 'TaskStatusChanged' && e.taskId === 'stuck' && e.status === 'cancelled'),
    10_000,
    'cancelled',
  );
  await waitFor(() => ready('a') >= 2 && ready('b') >= 2, 90_000, 'ring set up again');
  t.match(
    events.get('a')!.find((e) => e.type === 'RunnerStatusChanged' && e.status === 'Failed'),
    { reason: /ring closed/ },
    'the runner said why it restarted',
  );
  for (const m of managers.values())
    m.taskCreated({ taskId: 'next', instanceId: 'cx', kind: 'all-reduce', params: { count: 1000 } });
  await waitFor(
    () =>
      events.get('a')!.some((e) => e.type === 'TaskStatusChanged' && e.taskId === 'next' && e.status === 'complete'),
    30_000,
    'next task',
  );
  t.pass('a later task completes on the new ring');
});
