import t from 'tap';
import { readyRunner } from './fixtures/ready-runner.js';
import { allGone, tempDir, waitFor } from './fixtures/helpers.js';

const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));

t.test('shutdown racing cancel: sends on the closed channel are swallowed (ClosedResourceError case)', async (t) => {
  const dir = tempDir(t);
  const { proc } = await readyRunner(t, dir);
  const pid = proc.pid!;
  void proc.startTask({ type: 'task', taskId: 'long', op: 'exec', params: {} });
  await waitFor(() => proc.status.state === 'Running', 10_000, 'Running');
  const shutdown = proc.shutdown({ gracefulMs: 3000, termMs: 1000, killMs: 1000 });
  const cancels = [proc.cancelTask('long'), proc.cancelTask('long')];
  const exit = await shutdown;
  // After the channel closed: more cancels and tasks, all swallowed.
  cancels.push(proc.cancelTask('long'), proc.cancelTask('other'));
  const late = await proc.startTask({ type: 'task', taskId: 'late', op: 'exec', params: {} });
  await Promise.all(cancels);
  t.equal(late, false, 'a task after the exit is not delivered, and nothing throws');
  t.ok(proc.swallowedSends >= 1, `sends on the closed channel were swallowed (${proc.swallowedSends})`);
  t.ok(exit.expected, 'clean, expected exit');
  t.equal(proc.status.state, 'Shutdown');
  t.same(await allGone([pid]), []);
  t.same(unhandled, [], 'no unhandled rejection');
});

t.test('a send on a closed channel in normal running marks the runner failed', async (t) => {
  const dir = tempDir(t);
  const { proc, events } = await readyRunner(t, dir, {
    TORUS_RUNNER_TEST_HOOKS: '1',
    TORUS_RUNNER_TEST_HOOK: 'close-channel',
  });
  const pid = proc.pid!;
  await proc.startTask({ type: 'task', taskId: 'x', op: 'close-channel', params: {} });
  await waitFor(() => proc.channelClosed, 10_000, 'the close reaches us');
  t.equal(await proc.startTask({ type: 'task', taskId: 'y', op: 'exec', params: {} }), false);
  const exit = await proc.exited;
  t.notOk(exit.expected, 'a fault, not a shutdown');
  t.match(exit.cause, /closed channel/);
  t.equal(proc.status.state, 'Failed');
  t.ok(
    events.some((e) => e.type === 'status' && e.status.state === 'Failed'),
    'Failed reported',
  );
  t.same(await allGone([pid]), []);
});

t.test('a cancel not answered in time fails the runner', async (t) => {
  const dir = tempDir(t);
  const { proc } = await readyRunner(t, dir, { TORUS_RUNNER_TEST_HOOKS: '1', TORUS_RUNNER_TEST_HOOK: 'close-channel' });
  // Simulate a runner that has stopped reading: it closes its side; the supervisor's cancel goes nowhere.
  await proc.startTask({ type: 'task', taskId: 'x', op: 'close-channel', params: {} });
  const ok = await proc.cancelTask('whatever');
  t.equal(ok, false);
  const exit = await proc.exited;
  t.notOk(exit.expected);
  t.equal(proc.status.state, 'Failed');
});
