import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Runtime } from '../../../src/runtime/runtime.js';
import { siblingModule } from '../../../src/runtime/module-url.js';
import type { ClusterEvent } from '../../../src/protocols/events.js';
import { allGone, appendToLog, loopbackInstance, tempDir, waitFor, echoCluster } from './fixtures/helpers.js';
import { supervisorActor } from './fixtures/supervisor-actor.js';

const workerModule = siblingModule(import.meta.url, '../../../src/actors/runner-supervisor/worker');

t.test('runner-supervisor actor: instance event → runner started, statuses proposed, deletion stops it', async (t) => {
  const dir = tempDir(t);
  const runtime = new Runtime({ nodeId: 'a' });
  const proposals = echoCluster(runtime);
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await runtime.shutdown();
  });
  runtime.onFault((actor, error) => t.comment(`fault ${actor}: ${error.message} ${JSON.stringify(error.details)}`));
  await runtime.supervise({
    name: 'runner-supervisor',
    module: workerModule,
    options: { nodeId: 'a', dataDir: dir, allowExec: true },
  });
  const out = join(dir, 'env.txt');
  const { workload: _w, ...plan } = await loopbackInstance('i1', ['a'], { kind: 'ring' });
  const created: ClusterEvent = {
    type: 'InstanceCreated',
    instance: plan as never,
    workload: {
      kind: 'exec',
      id: 'job',
      memoryBytes: 1,
      layers: 12,
      command: 'sh',
      args: ['-c', `env > ${out}; exec sleep 60`],
    },
  };
  appendToLog(runtime, created as never);
  await waitFor(
    () => proposals.some((e) => e.type === 'RunnerStatusChanged' && e.status === 'Running'),
    60_000,
    'Running proposed',
  );
  await waitFor(() => existsSync(out) && readFileSync(out, 'utf8').includes('WORLD_SIZE'), 10_000, 'env written');
  t.match(readFileSync(out, 'utf8'), /TORUS_RANK=0/);
  const runners = await runtime.request<{ pid: number; status: { state: string } }[]>('runner-supervisor', {
    type: 'runners',
  });
  t.equal(runners.length, 1);
  const pid = runners[0]!.pid;
  t.ok(pid > 0, 'runner pid visible');
  const view = runtime.snapshot('runner-supervisor') as { instances: string[]; runners: { status: string }[] };
  t.same(view.instances, ['i1'], 'snapshot lists the instance');
  appendToLog(runtime, { type: 'InstanceDeleted', instanceId: 'i1', reason: 'test' });
  await waitFor(
    () => proposals.some((e) => e.type === 'RunnerStatusChanged' && e.status === 'Shutdown'),
    20_000,
    'Shutdown proposed',
  );
  const states = proposals.flatMap((e) => (e.type === 'RunnerStatusChanged' ? [e.status] : []));
  t.same(states, [
    'Idle',
    'Connecting',
    'Connected',
    'Loading',
    'Loaded',
    'WarmingUp',
    'Ready',
    'Running',
    'ShuttingDown',
    'Shutdown',
  ]);
  t.same(await allGone([pid]), [], 'runner gone after deletion');
  // A second instance, then node shutdown with it mid-task: the runner goes with the node.
  const { workload: _w2, ...plan2 } = await loopbackInstance('i2', ['a'], { kind: 'ring' });
  appendToLog(runtime, { ...created, instance: plan2 } as never);
  await waitFor(
    () => proposals.filter((e) => e.type === 'RunnerStatusChanged' && e.status === 'Running').length === 2,
    60_000,
    'second Running',
  );
  const [second] = await runtime.request<{ pid: number }[]>('runner-supervisor', { type: 'runners' });
  stopped = true;
  await runtime.shutdown();
  t.same(await allGone([second!.pid]), [], 'no runner outlives the node');
  t.match(runtime.relayStats, {}, 'runtime stopped');
});

t.test(
  'runner-supervisor actor without a forwarded log: follows the keeper state it reads (at start, and again when replaced)',
  async (t) => {
    const dir = tempDir(t);
    const runtime = new Runtime({ nodeId: 'a' });
    const proposals: ClusterEvent[] = [];
    runtime.register('cluster', (body) => {
      proposals.push(...(body as unknown as { events: ClusterEvent[] }).events);
      return { ok: true };
    });
    const { workload: _w, ...plan } = await loopbackInstance('p1', ['a'], { kind: 'ring' });
    const record = {
      plan,
      workload: { kind: 'ring', id: 'ring', memoryBytes: 1, layers: 12 },
      status: 'active',
      generation: 1,
      runners: {},
    };
    let state: { state: unknown; lastIndex: number } = { state: { instances: {}, tasks: {} }, lastIndex: 0 };
    runtime.register('topology-keeper', () => state);
    t.teardown(() => runtime.shutdown());
    await runtime.supervise({
      name: 'runner-supervisor',
      module: workerModule,
      options: { nodeId: 'a', dataDir: dir },
    });
    state = {
      state: {
        instances: { p1: record },
        tasks: { t1: { id: 't1', instanceId: 'p1', kind: 'all-reduce', params: { count: 64 }, status: 'pending' } },
      },
      lastIndex: 5,
    };
    // A replaced state (a snapshot installed) is read again at once; nothing polls it.
    runtime.send('runner-supervisor', { type: 'state-replaced' });
    await waitFor(
      () => proposals.some((e) => e.type === 'TaskStatusChanged' && e.status === 'complete'),
      60_000,
      'task run from the state read after the replacement',
    );
    const [runner] = await runtime.request<{ pid: number }[]>('runner-supervisor', { type: 'runners' });
    state = { state: { instances: {}, tasks: {} }, lastIndex: 6 };
    runtime.send('runner-supervisor', { type: 'state-replaced' });
    runtime.send('runner-supervisor', { type: 'state-replaced' });
    await waitFor(
      () => proposals.some((e) => e.type === 'RunnerStatusChanged' && e.status === 'Shutdown'),
      20_000,
      'stopped when gone from the state',
    );
    t.same(await allGone([runner!.pid]), [], 'runner gone');
    t.equal(
      proposals.filter((e) => e.type === 'TaskStatusChanged' && e.status === 'complete').length,
      1,
      'the task ran once despite repeated reads',
    );
  },
);

t.test('runner-supervisor actor behind on a slow stop: instances deleted before their start never spawn', async (t) => {
  const { proposals, send, instanceCreated } = await supervisorActor(t, { allowExec: true });
  const deleted = (instanceId: string): ClusterEvent => ({ type: 'InstanceDeleted', instanceId, reason: 'test' });
  const statusesOf = (id: string) =>
    proposals.flatMap((e) => (e.type === 'RunnerStatusChanged' && e.instanceId === id ? [e.status] : []));
  // A job that ignores SIGTERM: stopping it takes the runner's kill grace (seconds).
  send(await instanceCreated('stubborn', 'sh', ['-c', "trap '' TERM; sleep 60 & wait"]));
  await waitFor(() => statusesOf('stubborn').includes('Running'), 60_000, 'stubborn running');
  const churn = await Promise.all(Array.from({ length: 30 }, (_, i) => instanceCreated(`churn-${i}`, 'true', [])));
  const last = await instanceCreated('last', 'true', []);
  send(deleted('stubborn'));
  for (const [i, created] of churn.entries()) {
    send(created);
    send(deleted(`churn-${i}`));
  }
  send(last);
  await waitFor(() => statusesOf('last').includes('Shutdown'), 60_000, 'the instance after the churn ran');
  t.ok(statusesOf('stubborn').includes('Shutdown'), 'the slow stop finished first');
  const spawned = churn.map((_, i) => `churn-${i}`).filter((id) => statusesOf(id).length > 0);
  t.same(spawned, [], 'no runner started for an instance deleted while its start waited');
});
