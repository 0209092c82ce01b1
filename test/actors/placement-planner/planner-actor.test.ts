import t from 'tap';
import { createActor } from 'xstate';
import { placementPlannerMachine } from '../../../src/actors/placement-planner/machine.js';
import runPlacementPoolTask from '../../../src/actors/placement-planner/pool-task.js';
import { Runtime } from '../../../src/runtime/runtime.js';
import { both, fullyConnected, GB, makeState, request } from '../../fixtures/placement/build-state.js';

const workerModule = new URL(
  `../../../src/actors/placement-planner/worker.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`,
  import.meta.url,
);

t.test('machine: idle ⇄ planning, counts outcomes', async (t) => {
  const actor = createActor(placementPlannerMachine, { input: { nodeId: 'n1' } }).start();
  t.equal(actor.getSnapshot().value, 'idle');
  actor.send({ type: 'planning.started', kind: 'plan' });
  actor.send({ type: 'planning.started', kind: 'preview' });
  t.equal(actor.getSnapshot().value, 'planning');
  actor.send({ type: 'planning.finished', kind: 'plan', outcome: 'plan', nodes: ['a'], where: 'inline', elapsedMs: 1 });
  t.equal(actor.getSnapshot().value, 'planning', 'one still in flight');
  actor.send({
    type: 'planning.finished',
    kind: 'preview',
    outcome: 'refusal',
    message: 'no',
    where: 'cpu-pool',
    elapsedMs: 2,
  });
  const s = actor.getSnapshot();
  t.equal(s.value, 'idle');
  t.match(s.context, {
    nodeId: 'n1',
    inFlight: 0,
    plans: 1,
    refusals: 1,
    last: { kind: 'preview', outcome: 'refusal', where: 'cpu-pool' },
  });
  actor.stop();
});

t.test('pool task default export plans from plain data', async (t) => {
  const state = makeState([
    { id: 'a', mem: 4 * GB },
    { id: 'b', mem: 4 * GB },
  ]);
  both(state, 'a', 'b', 'ethernet');
  const out = runPlacementPoolTask({ kind: 'plan', state, request: request({ minNodes: 2 }), seed: 1 });
  t.ok('instance' in out && out.instance.nodes.length === 2);
});

t.test('actor in a worker: plan and preview inline and on the cpu pool, bad bodies rejected', async (t) => {
  const runtime = new Runtime();
  t.teardown(() => runtime.kill());
  await runtime.supervise({
    name: 'placement-planner',
    module: workerModule,
    options: { nodeId: 'n0', apiPort: 50000, poolThresholdNodes: 8 },
  });
  const small = makeState([
    { id: 'a', mem: 4 * GB },
    { id: 'b', mem: 4 * GB },
    { id: 'c', mem: 4 * GB },
  ]);
  both(small, 'a', 'b', 'ethernet');
  both(small, 'b', 'c', 'ethernet');
  both(small, 'a', 'c', 'ethernet');
  const plan = await runtime.request<{ instance: { nodes: string[]; port: number }; explanation: { seed: number } }>(
    'placement-planner',
    { type: 'plan', state: small, request: request({ minNodes: 3 }), seed: 5 },
  );
  t.same(plan.instance.nodes, ['a', 'b', 'c']);
  t.equal(plan.explanation.seed, 5);
  const refusal = await runtime.request<{ refusal: { kind: string; message: string } }>('placement-planner', {
    type: 'plan',
    state: small,
    request: request({}, { memoryBytes: 100 * GB }),
    seed: 5,
  });
  t.equal(refusal.refusal.kind, 'memory', 'a refusal is a reply, not an error');
  let snap = await runtime.request<{ value: string; plans: number; refusals: number; last: { where: string } }>(
    'placement-planner',
    { type: 'snapshot' },
  );
  t.match(snap, { value: 'idle', plans: 1, refusals: 1, last: { where: 'inline' } });

  // 16 nodes > poolThresholdNodes: planned in a piscina thread; the seed makes it equal to an inline plan.
  const big = fullyConnected(16, (a, b) => 1e9 + ((a * 31 + b * 17) % 7) * 1e8, 4 * GB);
  const body = { type: 'plan', state: big, request: request({}, { memoryBytes: 50 * GB, layers: 64 }), seed: 9 };
  const pooled = await runtime.request<{ instance: { nodes: string[] } }>('placement-planner', body, {
    timeoutMs: 60_000,
  });
  t.equal(pooled.instance.nodes.length, 13, '13 × 4 GB ≥ 50 GB, 5 layers of 64 fit each node');
  t.same(
    pooled,
    runPlacementPoolTask({ kind: 'plan', state: big, request: body.request, seed: 9, reservedPorts: [52415, 50000] }),
    'same as the pure task',
  );
  snap = await runtime.request('placement-planner', { type: 'snapshot' });
  t.equal(snap.last.where, 'cpu-pool');
  const previews = await runtime.request<{ previews: unknown[] }>('placement-planner', {
    type: 'preview',
    state: small,
    request: request(),
    seed: 1,
  });
  t.equal(previews.previews.length, 12);

  // No state in the body: the planner asks the topology keeper (here a host service standing in for it, in the
  // shape src/actors/topology-keeper/placement-state.ts produces).
  runtime.register('topology-keeper', (b) => {
    if (b.type !== 'placementState') throw new Error(`unexpected ${b.type}`);
    return small;
  });
  const live = await runtime.request<{ instance: { nodes: string[] } }>('placement-planner', {
    type: 'plan',
    request: request({ minNodes: 3 }),
    seed: 5,
  });
  t.same(live, plan, 'planned on the live state');
  await t.rejects(
    runtime.request('placement-planner', {
      type: 'plan',
      state: { nodes: [{ id: 'a', memory: 5 }] },
      request: request(),
    }),
    { message: /state\.nodes\[0\]\.memory: expected an object, got number/ },
  );
  await t.rejects(
    runtime.request('placement-planner', { type: 'plan', state: small, request: request({ backend: 'mpi' }) }),
    { message: /request\.backend/ },
  );
  await t.rejects(runtime.request('placement-planner', { type: 'plan', state: small, request: request(), seed: -3 }), {
    message: /seed/,
  });
  snap = await runtime.request('placement-planner', { type: 'snapshot' });
  t.equal(snap.value, 'idle', 'still serving after bad requests');
});
