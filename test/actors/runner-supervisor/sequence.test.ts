import t from 'tap';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { allGone, localCluster, loopbackInstance, statesOf, tempDir, waitFor } from './fixtures/helpers.js';

t.test('exec: canonical status sequence for one command, then deletion', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'out.txt');
  const { managers, events } = localCluster(t, ['a'], dir);
  const a = managers.get('a')!;
  const instance = await loopbackInstance('ex1', ['a'], {
    kind: 'exec',
    command: ['sh', '-c', `echo "rank=$TORUS_RANK" > ${out}`],
  });
  a.instanceCreated(instance);
  await waitFor(
    () => existsSync(out) && statesOf(events.get('a')!).filter((s) => s === 'Ready').length === 2,
    20_000,
    'command run',
  );
  t.equal(readFileSync(out, 'utf8'), 'rank=0\n');
  await a.instanceDeleted('ex1');
  t.same(statesOf(events.get('a')!), [
    'Idle',
    'Connecting',
    'Connected',
    'Loading',
    'Loaded',
    'WarmingUp',
    'Ready',
    'Running',
    'Ready',
    'ShuttingDown',
    'Shutdown',
  ]);
  const readies = events.get('a')!.filter((e) => e.type === 'RunnerStatusChanged' && e.status === 'Ready');
  t.notOk((readies[0] as { reason?: string }).reason, 'the first Ready has no command outcome yet');
  t.match(
    readies[1],
    { exitCode: 0, reason: /^command exited with code 0 after \d+\.\d s$/ },
    'the Ready after the command tells how it ended',
  );
  t.same(await allGone(a.pids), [], 'no runner left');
});

t.test(
  'exec: a failing command is told on the runner (exit code and reason), the runner is not restarted for it',
  async (t) => {
    const dir = tempDir(t);
    const { managers, events } = localCluster(t, ['a'], dir);
    const a = managers.get('a')!;
    const instance = await loopbackInstance('ex2', ['a'], { kind: 'exec', command: ['sh', '-c', 'exit 3'] });
    a.instanceCreated(instance);
    await waitFor(() => statesOf(events.get('a')!).filter((s) => s === 'Ready').length === 2, 20_000, 'command ended');
    const last = events
      .get('a')!
      .filter((e) => e.type === 'RunnerStatusChanged')
      .at(-1);
    t.match(last, { status: 'Ready', exitCode: 3, reason: /^command failed: sh exited with code 3$/ });
    await a.instanceDeleted('ex2');
    t.notOk(
      statesOf(events.get('a')!).includes('Failed'),
      'a command that exits non-zero is an outcome, not a runner crash',
    );
  },
);

t.test('ring: three ranks connect to their neighbours, run collective tasks, report them', async (t) => {
  const dir = tempDir(t);
  const { managers, events } = localCluster(t, ['a', 'b', 'c'], dir);
  const instance = await loopbackInstance('r1', ['a', 'b', 'c'], { kind: 'ring' });
  for (const m of managers.values()) m.instanceCreated(instance);
  await waitFor(() => ['a', 'b', 'c'].every((n) => statesOf(events.get(n)!).includes('Ready')), 90_000, 'all Ready');
  for (const m of managers.values()) m.taskCreated({ taskId: 'bar1', instanceId: 'r1', kind: 'barrier' });
  for (const m of managers.values()) m.taskCreated({ taskId: 'bar1', instanceId: 'r1', kind: 'barrier' }); // sent twice, runs once
  await waitFor(
    () => events.get('a')!.some((e) => e.type === 'TaskStatusChanged' && e.status === 'complete'),
    20_000,
    'task complete',
  );
  for (const m of managers.values())
    m.taskCreated({ taskId: 'ar1', instanceId: 'r1', kind: 'all-reduce', params: { count: 100_003, iters: 2 } });
  await waitFor(
    () => events.get('a')!.filter((e) => e.type === 'TaskStatusChanged' && e.status === 'complete').length === 2,
    30_000,
    'all-reduce complete',
  );
  // Each rank reports its own Running → Ready for the all-reduce; rank 0's completion can arrive before the others'.
  await waitFor(
    () => ['a', 'b', 'c'].every((n) => statesOf(events.get(n)!).filter((s) => s === 'Ready').length === 3),
    20_000,
    'every rank Ready after both tasks',
  );
  await Promise.all([...managers.values()].map((m) => m.instanceDeleted('r1')));
  const canonical = [
    'Idle',
    'Connecting',
    'Connected',
    'Loading',
    'Loaded',
    'WarmingUp',
    'Ready',
    'Running',
    'Ready',
    'Running',
    'Ready',
    'ShuttingDown',
    'Shutdown',
  ];
  t.same(statesOf(events.get('a')!), canonical, 'rank 0 sequence');
  t.same(statesOf(events.get('b')!), canonical, 'rank 1 sequence');
  t.same(statesOf(events.get('c')!), canonical, 'rank 2 sequence');
  const tasks = events.get('a')!.filter((e) => e.type === 'TaskStatusChanged');
  t.same(
    tasks.map((e) => e.type === 'TaskStatusChanged' && `${e.taskId} ${e.status}`),
    ['bar1 running', 'bar1 complete', 'ar1 running', 'ar1 complete'],
    'rank 0 reports each task once',
  );
  t.match(tasks[1], { result: { op: 'barrier', worldSize: 3 } }, 'barrier with its timing');
  t.match(
    tasks[3],
    { result: { op: 'all-reduce', worldSize: 3, count: 100_003, wrong: 0, iters: 2 } },
    'exact all-reduce with its timing',
  );
  t.same(
    events.get('b')!.filter((e) => e.type === 'TaskStatusChanged'),
    [],
    'other ranks report no success of their own',
  );
});

t.test('exec: a re-placed instance (same runner id) starts its command again', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'runs.txt');
  const { managers } = localCluster(t, ['a'], dir);
  const a = managers.get('a')!;
  const instance = await loopbackInstance('rp', ['a'], {
    kind: 'exec',
    command: ['sh', '-c', `echo "run $TORUS_INSTANCE_ID" >> ${out}`],
  });
  a.instanceCreated(instance);
  await waitFor(() => existsSync(out) && readFileSync(out, 'utf8').split('\n').length === 2, 30_000, 'first run');
  await a.instanceReplaced({ ...instance, port: instance.port });
  await waitFor(() => readFileSync(out, 'utf8').split('\n').length === 3, 30_000, 'second run after re-placement');
  t.equal(readFileSync(out, 'utf8'), 'run rp\nrun rp\n');
});
