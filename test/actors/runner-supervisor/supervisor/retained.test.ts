/**
 * What a runner manager keeps stays bounded by what runs on its node, not by the cluster's history: a node runs
 * for months while the cluster places an instance a second, most of them on other nodes.
 */
import t from 'tap';
import { localCluster, loopbackInstance, statesOf, tempDir, waitFor } from '../fixtures/helpers.js';
import type { ManagerEvent } from '../../../../src/actors/runner-supervisor/supervisor/runner-manager-options.js';

const taskStates = (events: readonly ManagerEvent[], id: string) =>
  events.flatMap((e) => (e.type === 'TaskStatusChanged' && e.taskId === id ? [e.status] : []));

t.test('statuses and cancels of instances placed elsewhere leave nothing behind', async (t) => {
  const { managers } = localCluster(t, ['a'], tempDir(t));
  const a = managers.get('a')!;
  // Such a node is never told to stop these instances: it runs no rank of them.
  for (let i = 0; i < 2000; i++) a.runnerStatusChanged(`elsewhere-${i}`, 'b', { state: 'Ready' }, 0);
  t.equal(a.retained().peerStatuses, 0, "no entry for another node's instance");
  for (let i = 0; i < 5000; i++) await a.cancelTask(`their-task-${i}`);
  t.equal(a.retained().unmatchedCancels, 4096, "another node's cancels are remembered up to a bound");
});

t.test("a deleted instance's statuses, completions and tasks go with its runner", async (t) => {
  const { managers, events } = localCluster(t, ['a', 'b'], tempDir(t), { autoExec: false });
  const a = managers.get('a')!;
  const ev = events.get('a')!;
  const instance = await loopbackInstance('kept', ['a', 'b'], { kind: 'exec', command: ['true'] });
  a.instanceCreated(instance);
  managers.get('b')!.instanceCreated(instance);
  await waitFor(() => statesOf(ev).includes('Ready'), 30_000, 'Ready');
  a.runnerStatusChanged('kept', 'b', { state: 'Ready' }, 0);
  a.taskCreated({ taskId: 'quick', instanceId: 'kept', kind: 'exec', params: { command: ['true'] } });
  await waitFor(() => taskStates(ev, 'quick').includes('complete'), 10_000, 'quick complete');
  a.taskCreated({ taskId: 'long', instanceId: 'kept', kind: 'exec', params: { command: ['sleep', '30'] } });
  await waitFor(() => taskStates(ev, 'long').includes('running'), 10_000, 'long running');
  await a.cancelTask('long');
  t.match(a.retained(), { runners: 1, peerStatuses: 1, exitedOk: 1, unmatchedCancels: 0 }, 'held while it runs');

  // Re-placed on the same node: the tasks it ran do not run again.
  await a.instanceReplaced(instance);
  a.taskCreated({ taskId: 'quick', instanceId: 'kept', kind: 'exec', params: { command: ['true'] } });
  await waitFor(() => statesOf(ev).filter((s) => s === 'Ready').length >= 2, 30_000, 'Ready again');
  await new Promise((r) => setTimeout(r, 300));
  t.same(taskStates(ev, 'quick'), ['running', 'complete'], 'a task sent again after a re-placement ran once');

  await a.instanceDeleted('kept');
  t.match(a.retained(), { runners: 0, peerStatuses: 0, exitedOk: 0, unmatchedCancels: 0 }, 'nothing left');
});
