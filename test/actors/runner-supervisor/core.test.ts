import t from 'tap';
import { createActor } from 'xstate';
import {
  runnerLifecycle,
  statusOf,
  type LifecycleEvent,
} from '../../../src/actors/runner-supervisor/child/lifecycle.js';
import { decideNextStep } from '../../../src/actors/runner-supervisor/supervisor/coordination.js';
import { backoffDelayMs, decideRestartInRow, RUNNER_RESTART_POLICY } from '../../../src/runtime/restart-policy.js';
import { admitTask, emptyLedger, setTaskStatus } from '../../../src/actors/runner-supervisor/child/task-ledger.js';
import { formatRunnerStatus, type RunnerStatus } from '../../../src/protocols/runner-status.js';

t.test('lifecycle: the canonical sequence, and refusals outside it', async (t) => {
  const actor = createActor(runnerLifecycle).start();
  const seen: string[] = [formatRunnerStatus(statusOf(actor.getSnapshot()))];
  const steps: LifecycleEvent[] = [
    { type: 'connect' },
    { type: 'connected' },
    { type: 'load', totalLayers: 4 },
    { type: 'progress', layersLoaded: 2 },
    { type: 'loaded' },
    { type: 'warmup' },
    { type: 'ready' },
    { type: 'run' },
    { type: 'run' },
    { type: 'taskDone' },
    { type: 'taskDone' },
    { type: 'shutdown' },
    { type: 'stopped' },
  ];
  for (const e of steps) {
    t.ok(actor.getSnapshot().can(e), `accepts ${e.type} in ${String(actor.getSnapshot().value)}`);
    actor.send(e);
    seen.push(formatRunnerStatus(statusOf(actor.getSnapshot())));
  }
  t.same(seen, [
    'Idle',
    'Connecting',
    'Connected',
    'Loading(0/4)',
    'Loading(2/4)',
    'Loaded',
    'WarmingUp',
    'Ready',
    'Running',
    'Running',
    'Running',
    'Ready',
    'ShuttingDown',
    'Shutdown',
  ]);
  const b = createActor(runnerLifecycle).start();
  t.notOk(b.getSnapshot().can({ type: 'warmup' }), 'Idle refuses warmup');
  t.notOk(b.getSnapshot().can({ type: 'run' }), 'Idle refuses a task');
  b.send({ type: 'fail', reason: 'boom', diagnostics: ['last line'] });
  t.same(statusOf(b.getSnapshot()), { state: 'Failed', reason: 'boom', diagnostics: ['last line'] });
  t.notOk(b.getSnapshot().can({ type: 'connect' }), 'Failed is final');
});

const S = (state: string): RunnerStatus => ({ state }) as RunnerStatus;
const input = (rank: number, states: (string | undefined)[], pendingTasks: string[] = []) => ({
  rank,
  worldSize: states.length,
  statuses: states.map((s) => (s ? S(s) : undefined)),
  stepInFlight: false,
  pendingTasks,
});

t.test(
  'coordination: connect, last rank last; load when all connected; rank 0 warms up last; tasks when all ready',
  async (t) => {
    t.same(decideNextStep(input(0, ['Idle', 'Idle', 'Idle'])), { kind: 'connect' });
    t.same(
      decideNextStep(input(0, ['Idle', undefined, undefined])),
      { kind: 'connect' },
      'unreported peers count as Idle',
    );
    t.equal(decideNextStep(input(2, ['Idle', 'Connecting', 'Idle'])).kind, 'wait', 'last rank waits for all others');
    t.same(decideNextStep(input(2, ['Connecting', 'Connected', 'Idle'])), { kind: 'connect' });
    t.same(decideNextStep(input(0, ['Idle'])), { kind: 'connect' }, 'a single runner connects at once');
    t.equal(decideNextStep(input(0, ['Connected', 'Connecting'])).kind, 'wait');
    t.same(decideNextStep(input(0, ['Connected', 'Loading'])), { kind: 'load' });
    t.same(decideNextStep(input(1, ['Loaded', 'Loaded'])), { kind: 'warmup' });
    t.equal(decideNextStep(input(0, ['Loaded', 'Loaded'])).kind, 'wait', 'rank 0 waits for the others to warm up');
    t.same(decideNextStep(input(0, ['Loaded', 'WarmingUp', 'Ready'])), { kind: 'warmup' });
    t.equal(decideNextStep(input(0, ['Ready', 'WarmingUp'], ['t1'])).kind, 'wait', 'tasks wait for every runner Ready');
    t.same(decideNextStep(input(0, ['Ready', 'Running'], ['t1', 't2'])), { kind: 'run', taskId: 't1' });
    t.same(decideNextStep(input(1, ['Failed', 'Ready'])).kind, 'shutdown', 'a failed peer stops the others');
    t.equal(decideNextStep({ ...input(0, ['Idle']), stepInFlight: true }).kind, 'wait');
    t.equal(decideNextStep(input(0, [undefined])).kind, 'wait');
  },
);

t.test(
  'coordination of an exec job: its own steps wait for no other rank; its command waits for every rank Ready',
  async (t) => {
    const exec = (rank: number, states: (string | undefined)[], tasks: string[] = []) => ({
      ...input(rank, states, tasks),
      localSteps: true,
    });
    t.same(decideNextStep(exec(2, ['Idle', 'Idle', 'Idle'])), { kind: 'connect' }, 'the last rank connects at once');
    t.same(
      decideNextStep(exec(0, ['Connected', 'Idle', undefined])),
      { kind: 'load' },
      'loads before the others connect',
    );
    t.same(decideNextStep(exec(0, ['Loaded', 'Idle', 'Idle'])), { kind: 'warmup' }, 'rank 0 warms up first');
    t.same(decideNextStep(exec(1, ['Idle', 'Loaded', 'Connecting'])), { kind: 'warmup' });
    t.equal(
      decideNextStep(exec(0, ['Ready', 'Loaded', 'Ready'], ['t1'])).kind,
      'wait',
      'its command still waits for every rank Ready',
    );
    t.same(decideNextStep(exec(0, ['Ready', 'Ready', 'Running'], ['t1'])), { kind: 'run', taskId: 't1' });
    t.equal(decideNextStep(exec(0, ['Idle', 'Failed', 'Idle'])).kind, 'shutdown', 'a failed peer still stops it');
    t.equal(decideNextStep({ ...exec(0, ['Idle']), stepInFlight: true }).kind, 'wait', 'one step at a time');
  },
);

t.test('backoff: 0.5 s doubling, capped, bounded', async (t) => {
  t.same(
    [1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelayMs(n, RUNNER_RESTART_POLICY)),
    [500, 1000, 2000, 4000, 8000, 10000, 10000],
  );
  t.same(decideRestartInRow(1, 'signal=SIGKILL'), { kind: 'restart', attempt: 1, delayMs: 500 });
  const gaveUp = decideRestartInRow(6, 'signal=SIGKILL');
  t.equal(gaveUp.kind, 'give-up');
  t.match(gaveUp.kind === 'give-up' ? gaveUp.reason : '', /5 restarts.*signal=SIGKILL/);
});

t.test('task ledger: a task sent twice runs once; terminal sticks', async (t) => {
  const a = admitTask(emptyLedger, 't1');
  t.ok(a.admitted);
  const b = admitTask(a.ledger, 't1');
  t.notOk(b.admitted);
  let l = setTaskStatus(a.ledger, 't1', 'running');
  l = setTaskStatus(l, 't1', 'cancelled');
  l = setTaskStatus(l, 't1', 'complete');
  t.equal(l.get('t1'), 'cancelled');
});
