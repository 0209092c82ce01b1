import t from 'tap';
import { localCluster, loopbackInstance, statesOf, tempDir, waitFor } from './fixtures/helpers.js';

t.test('ring runner: every collective and dtype, exact results, nccl-tests timings', async (t) => {
  const dir = tempDir(t);
  const nodes = ['a', 'b', 'c'];
  const { managers, events } = localCluster(t, nodes, dir);
  const instance = await loopbackInstance('rt', nodes, { kind: 'ring' });
  for (const m of managers.values()) m.instanceCreated(instance);
  await waitFor(() => nodes.every((n) => statesOf(events.get(n)!).includes('Ready')), 90_000, 'all Ready');
  const tasks: [string, string, Record<string, unknown>][] = [
    ['ar-f16-max', 'all-reduce', { count: 999, dtype: 'float16', op: 'max', warmup: 1, iters: 2 }],
    ['ar-i32-min', 'all-reduce', { count: 70_001, dtype: 'int32', op: 'min' }],
    ['ag-f32', 'all-gather', { count: 12_345, dtype: 'float32', iters: 2 }],
    ['ag-f16', 'all-gather', { count: 5, dtype: 'float16' }],
    ['bc-i32', 'broadcast', { count: 40_000, dtype: 'int32', root: 2 }],
    ['sr-f32', 'send-recv', { count: 3_333, dtype: 'float32' }],
  ];
  for (const [taskId, kind, params] of tasks)
    for (const m of managers.values()) m.taskCreated({ taskId, instanceId: 'rt', kind, params });
  const done = () => events.get('a')!.filter((e) => e.type === 'TaskStatusChanged' && e.status === 'complete');
  await waitFor(() => done().length === tasks.length, 60_000, 'every task complete').catch((e: Error) => {
    throw new Error(
      `${e.message}: ${JSON.stringify([...events.entries()].map(([n, es]) => [n, es.filter((x) => x.type === 'TaskStatusChanged').map((x) => [(x as { taskId: string }).taskId, (x as { status: string }).status, String((x as { error?: string }).error ?? '').slice(0, 200)])]))}`,
    );
  });
  for (const [taskId, kind, params] of tasks) {
    const e = done().find((x) => x.type === 'TaskStatusChanged' && x.taskId === taskId);
    t.match(e, { result: { op: kind, worldSize: 3, count: params.count, wrong: 0 } }, `${taskId}: exact`);
    const r = (e as unknown as { result: { timeUs: number; algbw: number; busbw: number } }).result;
    t.ok(
      r.timeUs > 0 && r.algbw > 0 && r.busbw > 0,
      `${taskId}: timed (${r.timeUs} µs, busbw ${r.busbw.toFixed(3)} GB/s)`,
    );
  }
  const bad = 'bad-op';
  for (const m of managers.values())
    m.taskCreated({ taskId: bad, instanceId: 'rt', kind: 'all-reduce', params: { count: 10, dtype: 'float64' } });
  await waitFor(
    () => events.get('a')!.some((e) => e.type === 'TaskStatusChanged' && e.taskId === bad && e.status === 'failed'),
    20_000,
    'bad task failed',
  );
  t.match(
    events.get('a')!.find((e) => e.type === 'TaskStatusChanged' && e.taskId === bad && e.status === 'failed'),
    { error: /dtype/ },
    'a bad task fails with the reason',
  );
  t.equal(managers.get('a')!.runners()[0]!.failures, 0, 'a bad task does not fail the runner');
});
