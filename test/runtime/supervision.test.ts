import t from 'tap';
import { decideRestart } from '../../src/runtime/restart-policy.js';
import { fastPolicy, probeModule, sleep, testRuntime, waitFor } from './helpers.js';

t.test('restart policy: backoff grows, intensity is bounded', async (t) => {
  const policy = { maxRestarts: 3, periodMs: 1_000, initialDelayMs: 100, maxDelayMs: 350, factor: 2 };
  let history: readonly number[] = [];
  const delays: number[] = [];
  for (const now of [0, 10, 20]) {
    const d = decideRestart(history, now, policy);
    if (d.action !== 'restart') throw new Error('expected restart');
    delays.push(d.delayMs);
    history = d.history;
  }
  t.same(delays, [100, 200, 350], 'doubling, capped');
  const fourth = decideRestart(history, 30, policy);
  t.equal(fourth.action, 'escalate');
  t.match(fourth, { reason: /4 crashes within 1000 ms exceed the restart intensity of 3/ });
  t.equal(decideRestart(history, 5_000, policy).action, 'restart', 'old crashes age out of the period');
});

t.test('an actor that throws is restarted and serves again', async (t) => {
  const { runtime } = testRuntime(t);
  await runtime.supervise({ name: 'probe', module: probeModule, options: { start: 1 } });
  runtime.send('probe', { type: 'boom' });
  await waitFor(() => runtime.stats().probe?.restarts === 1, 30_000, 'a restart');
  t.match(runtime.stats().probe?.lastCause, /boom inside a transition/, 'the cause is kept');
  // Messages sent while it restarts wait in the backlog and are delivered to the new incarnation.
  runtime.send('probe', { type: 'inc', by: 4 });
  t.same(await runtime.request('probe', { type: 'snapshot' }, { timeoutMs: 30_000 }), { value: 'running', count: 5 });
});

t.test('a worker that exits or throws outside the machine is restarted too', async (t) => {
  const { runtime } = testRuntime(t);
  await runtime.supervise({ name: 'probe', module: probeModule });
  await runtime.request('probe', { type: 'exit' });
  await waitFor(() => runtime.stats().probe?.restarts === 1, 30_000, 'restart after exit');
  t.match(runtime.stats().probe?.lastCause, /code 3/);
  t.equal(await runtime.request('probe', { type: 'echo', payload: 1 }, { timeoutMs: 30_000 }), 1);
  await runtime.request('probe', { type: 'uncaught' });
  await waitFor(() => runtime.stats().probe?.restarts === 2, 30_000, 'restart after uncaught error');
  t.match(runtime.stats().probe?.lastCause, /uncaught in worker/);
  t.equal(await runtime.request('probe', { type: 'echo', payload: 2 }, { timeoutMs: 30_000 }), 2);
});

t.test('the runtime says when an actor went down and why, until it is back', async (t) => {
  const { runtime } = testRuntime(t);
  await runtime.supervise({ name: 'probe', module: probeModule });
  t.equal(runtime.downCause('probe'), undefined, 'running');
  const downs: string[] = [];
  runtime.onDown((actor, reason) => downs.push(`${actor}: ${reason}; ${runtime.downCause(actor)}`));
  const seen = new Promise<void>((resolve) => runtime.onDown(() => resolve()));
  await runtime.request('probe', { type: 'exit' });
  await seen;
  t.same(downs, ['probe: worker exited with code 3; restarting after: worker exited with code 3']);
  t.equal(runtime.stats().probe?.restarts, 1, 'and its restart is scheduled');
  await waitFor(() => runtime.stats().probe?.state === 'ready', 30_000, 'the restart');
  t.equal(runtime.downCause('probe'), undefined, 'back');
  await runtime.shutdown();
  t.same(downs.slice(1), ['probe: stopped; stopped'], 'a stop is told too');
});

t.test('an actor that keeps crashing exhausts its intensity and escalates; delays grow', async (t) => {
  const escalations: string[] = [];
  const { runtime } = testRuntime(t, { onEscalate: (actor, reason) => escalations.push(`${actor}: ${reason}`) });
  const started = Date.now();
  const ready = runtime.supervise({ name: 'probe', module: probeModule, options: { crashOnStart: true } });
  await t.rejects(ready, /keeps crashing/, 'the start fails once the supervisor gives up');
  t.equal(escalations.length, 1);
  t.match(escalations[0], /probe: actor probe keeps crashing .*restart intensity of 3.*crash on start/);
  t.equal(runtime.stats().probe?.state, 'gave-up');
  t.equal(runtime.stats().probe?.restarts, fastPolicy.maxRestarts);
  t.ok(Date.now() - started >= 50 + 100 + 200, 'the backoff delays (50, 100, 200 ms) were waited');
  t.equal(runtime.liveWorkers(), 0, 'no worker left behind');
});

t.test('shutdown with messages in flight and a worker mid-restart: clean, no leaks', async (t) => {
  const { runtime, unhandled } = testRuntime(t);
  await runtime.supervise({ name: 'steady', module: probeModule });
  await runtime.supervise({ name: 'crashy', module: probeModule });
  const inflight = [
    runtime.request('steady', { type: 'slow', ms: 200 }),
    runtime.request('steady', { type: 'slow', ms: 5_000 }),
  ];
  for (let i = 0; i < 1_000; i++) runtime.send('steady', { type: 'inc', by: 1 });
  runtime.send('crashy', { type: 'boom' });
  await waitFor(() => runtime.stats().crashy?.state !== 'ready', 5_000, 'crashy down');
  runtime.send('crashy', { type: 'inc', by: 1 }); // lands in the backlog of a restarting actor
  const first = runtime.shutdown({ order: ['crashy', 'steady'], deadlineMs: 1_000 });
  const second = runtime.shutdown();
  t.equal(first, second, 'shutdown is idempotent');
  runtime.send('steady', { type: 'inc', by: 1 }); // a send during shutdown never throws
  await first;
  runtime.send('steady', { type: 'inc', by: 1 }); // the channel is closed now: swallowed, not a fault
  const settled = await Promise.allSettled(inflight);
  t.equal(settled[0]?.status, 'fulfilled', 'the current message finished');
  t.match(
    settled[1],
    { status: 'rejected', reason: { code: /TORUS_SHUTTING_DOWN|TORUS_ACTOR/ } },
    'a long one is cut at the deadline with an error, not left hanging',
  );
  t.equal(runtime.liveWorkers(), 0, 'no worker left');
  await sleep(200);
  t.same(unhandled, [], 'no unhandled rejection');
  t.ok(runtime.relayStats.swallowedDuringShutdown >= 1, 'the closed-channel send was swallowed');
  t.equal(runtime.relayStats.faults, 0, 'and not reported as a fault');
});

t.test('a send to a dead actor in normal running is reported as a fault', async (t) => {
  const escalations: string[] = [];
  const { runtime } = testRuntime(t, {
    onEscalate: (a) => escalations.push(a),
    restartPolicy: { ...fastPolicy, maxRestarts: 0 },
  });
  const faults: string[] = [];
  runtime.onFault((actor, error) => faults.push(`${actor}:${error.code}`));
  await t.rejects(runtime.supervise({ name: 'probe', module: probeModule, options: { crashOnStart: true } }));
  runtime.send('probe', { type: 'inc', by: 1 }, 'tester');
  t.same(faults, ['tester:TORUS_CHANNEL_CLOSED']);
});

t.test('a heap budget: the thread reports it as its limit, and one that outgrows it is restarted', async (t) => {
  const { runtime } = testRuntime(t);
  await runtime.supervise({ name: 'probe', module: probeModule, heapLimitMb: 64, youngGenerationMb: 8 });
  const heap = await runtime.request<{ limitBytes: number }>('probe', { type: 'heap' }, { timeoutMs: 30_000 });
  // V8 adds the young generation's space to the old generation's budget (without a young budget: 48-96 MiB more).
  t.ok(
    heap.limitBytes >= 64 * 2 ** 20 && heap.limitBytes <= (64 + 32) * 2 ** 20,
    `limit ${(heap.limitBytes / 2 ** 20).toFixed(0)} MiB`,
  );
  await runtime.request('probe', { type: 'hog' });
  await waitFor(() => runtime.stats().probe?.restarts === 1, 60_000, 'a restart after running out of its heap');
  t.match(runtime.stats().probe?.lastCause, /out of memory|ERR_WORKER_OUT_OF_MEMORY/i, 'the cause names the heap');
  t.equal(await runtime.request('probe', { type: 'echo', payload: 3 }, { timeoutMs: 30_000 }), 3, 'serves again');
  const fresh = await runtime.request<{ limitBytes: number }>('probe', { type: 'heap' }, { timeoutMs: 30_000 });
  t.equal(fresh.limitBytes, heap.limitBytes, 'the new incarnation keeps the budget');
});
