import t from 'tap';
import { join } from 'node:path';
import { RunnerProcess, type RunnerProcessEvent } from '../../src/runner/runner-process.js';
import type { RunnerStartConfig } from '../../src/protocols/runner.js';
import { allGone, localCluster, loopbackInstance, statesOf, tempDir, waitFor } from './fixtures/helpers.js';

const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));

function config(dir: string, command: string[]): RunnerStartConfig {
  return {
    runnerId: 's@a', instanceId: 's', nodeId: 'a', rank: 0, worldSize: 1, layerStart: 0, layerEnd: 1,
    workload: { kind: 'exec', command }, hosts: ['0.0.0.0:50001'], hostfilePath: join(dir, 'hostfile.json'), env: {},
  };
}

async function readyRunner(t: { teardown(fn: () => Promise<void>): void }, dir: string, env: Record<string, string> = {}, command = ['sleep', '60']) {
  const events: RunnerProcessEvent[] = [];
  const proc = new RunnerProcess({ config: config(dir, command), logDir: join(dir, 'logs'), onEvent: (e) => events.push(e), env, cancelTimeoutMs: 500 });
  t.teardown(async () => {
    await proc.shutdown({ gracefulMs: 200, termMs: 200, killMs: 500 });
  });
  proc.start();
  for (const type of ['connect', 'load', 'warmup'] as const) {
    await proc.startTask({ type, taskId: type });
    await waitFor(() => events.some((e) => e.type === 'task-status' && e.taskId === type && e.status === 'complete'), 60_000, type)
      .catch((err) => { throw new Error(`${String(err)}; diagnostics: ${proc.diagnostics.join(' | ')}; status ${proc.status.state}`); });
  }
  return { proc, events };
}

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
  const { proc, events } = await readyRunner(t, dir, { TORUS_RUNNER_TEST_HOOKS: '1', TORUS_RUNNER_TEST_HOOK: 'close-channel' });
  const pid = proc.pid!;
  await proc.startTask({ type: 'task', taskId: 'x', op: 'close-channel', params: {} });
  await new Promise((r) => setTimeout(r, 300)); // the close reaches us
  t.equal(await proc.startTask({ type: 'task', taskId: 'y', op: 'exec', params: {} }), false);
  const exit = await proc.exited;
  t.notOk(exit.expected, 'a fault, not a shutdown');
  t.match(exit.cause, /closed channel/);
  t.equal(proc.status.state, 'Failed');
  t.ok(events.some((e) => e.type === 'status' && e.status.state === 'Failed'), 'Failed reported');
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
