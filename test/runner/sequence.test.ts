import t from 'tap';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { allGone, localCluster, loopbackInstance, statesOf, tempDir, waitFor } from './helpers.js';

t.test('exec: canonical status sequence for one command, then deletion', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'out.txt');
  const { managers, events } = localCluster(t, ['a'], dir);
  const a = managers.get('a')!;
  const instance = await loopbackInstance('ex1', ['a'], { kind: 'exec', command: ['sh', '-c', `echo "rank=$TORUS_RANK" > ${out}`] });
  a.instanceCreated(instance);
  await waitFor(() => existsSync(out) && statesOf(events.get('a')!).filter((s) => s === 'Ready').length === 2, 20_000, 'command run');
  t.equal(readFileSync(out, 'utf8'), 'rank=0\n');
  await a.instanceDeleted('ex1');
  t.same(statesOf(events.get('a')!), ['Idle', 'Connecting', 'Connected', 'Loading', 'Loaded', 'WarmingUp', 'Ready', 'Running', 'Ready',
    'ShuttingDown', 'Shutdown']);
  t.same(await allGone(a.pids), [], 'no runner left');
});

t.test('ring: two ranks connect to their neighbours, run a barrier task, report it', async (t) => {
  const dir = tempDir(t);
  const { managers, events } = localCluster(t, ['a', 'b'], dir);
  const instance = await loopbackInstance('r1', ['a', 'b'], { kind: 'ring' });
  for (const m of managers.values()) m.instanceCreated(instance);
  await waitFor(() => ['a', 'b'].every((n) => statesOf(events.get(n)!).includes('Ready')), 30_000, 'both Ready');
  for (const m of managers.values()) m.taskCreated({ taskId: 'bar1', instanceId: 'r1', kind: 'barrier' });
  for (const m of managers.values()) m.taskCreated({ taskId: 'bar1', instanceId: 'r1', kind: 'barrier' }); // sent twice, runs once
  await waitFor(() => events.get('a')!.some((e) => e.type === 'TaskStatusChanged' && e.status === 'complete'), 10_000, 'task complete');
  await new Promise((r) => setTimeout(r, 200));
  for (const m of managers.values()) await m.instanceDeleted('r1');
  const canonical = ['Idle', 'Connecting', 'Connected', 'Loading', 'Loaded', 'WarmingUp', 'Ready', 'Running', 'Ready', 'ShuttingDown', 'Shutdown'];
  t.same(statesOf(events.get('a')!), canonical, 'rank 0 sequence');
  t.same(statesOf(events.get('b')!), canonical, 'rank 1 sequence');
  const tasks = events.get('a')!.filter((e) => e.type === 'TaskStatusChanged');
  t.same(tasks.map((e) => e.type === 'TaskStatusChanged' && e.status), ['running', 'complete'], 'rank 0 reports the task once');
  const done = tasks[1];
  t.match(done, { result: { op: 'barrier', worldSize: 2 } }, 'with its timing');
  t.same(events.get('b')!.filter((e) => e.type === 'TaskStatusChanged'), [], 'rank 1 reports no success of its own');
});
