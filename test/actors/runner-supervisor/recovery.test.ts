import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allGone, localCluster, loopbackInstance, statesOf, tempDir, waitFor } from './fixtures/helpers.js';

t.test(
  'kill -9 a runner: Failed with the signal, restarted with growing delays, given up after the limit',
  async (t) => {
    const dir = tempDir(t);
    const policy = { initialDelayMs: 300, factor: 2, maxDelayMs: 10_000, maxRestarts: 3, periodMs: 60_000 };
    const spawnedAt: number[] = [];
    const { managers, events, log } = localCluster(t, ['a'], dir, {
      policy,
      onSpawn: () => spawnedAt.push(Date.now()),
    });
    const a = managers.get('a')!;
    // The command records its own pid, so the test can check that no grandchild survives either.
    const pidDir = join(dir, 'pids');
    const instance = await loopbackInstance('k1', ['a'], {
      kind: 'exec',
      command: ['sh', '-c', `mkdir -p ${pidDir}; echo $$ > ${pidDir}/$$; exec sleep 60`],
    });
    a.instanceCreated(instance);
    const grandchildren = new Set<number>();
    for (let kill = 1; kill <= 4; kill++) {
      await waitFor(
        () => statesOf(events.get('a')!).filter((s) => s === 'Running').length === kill,
        40_000,
        `Running #${kill}`,
      );
      await waitFor(() => existsSync(pidDir) && readFileSyncDir(pidDir).length === kill, 10_000, 'command pid');
      for (const p of readFileSyncDir(pidDir)) grandchildren.add(p);
      const pid = a.runners()[0]!.pid!;
      process.kill(pid, 'SIGKILL');
      await waitFor(
        () => statesOf(events.get('a')!).filter((s) => s === 'Failed').length === kill,
        10_000,
        `Failed #${kill}`,
      );
    }
    await waitFor(() => events.get('a')!.some((e) => e.type === 'InstanceFailed'), 10_000, 'give up');
    const failed = events.get('a')!.filter((e) => e.type === 'RunnerStatusChanged' && e.status === 'Failed');
    t.equal(failed.length, 4);
    for (const [i, e] of failed.entries()) {
      t.match(e, { signal: 'SIGKILL', attempt: i + 1, reason: /signal=SIGKILL/ }, `failure ${i + 1} names the signal`);
    }
    const gaveUp = events.get('a')!.find((e) => e.type === 'InstanceFailed');
    t.match(gaveUp, { instanceId: 'k1', reason: /gave up after 3 restarts.*signal=SIGKILL/ }, 'give-up reason');
    // Restart delays: from each Failed report to the next spawn.
    const failedAt = log
      .filter((x) => x.event.type === 'RunnerStatusChanged' && x.event.status === 'Failed')
      .map((x) => x.at);
    const delays = spawnedAt.slice(1).map((at, i) => at - failedAt[i]!);
    t.equal(delays.length, 3, 'three restarts');
    t.ok(
      delays[0]! >= 300 && delays[1]! >= 600 && delays[2]! >= 1200,
      `delays at least 300/600/1200 ms: ${delays.join(', ')}`,
    );
    t.ok(delays[0]! < delays[1]! && delays[1]! < delays[2]!, 'growing');
    await new Promise((r) => setTimeout(r, 1500));
    t.equal(a.runners()[0]!.pid, undefined, 'no restart after giving up');
    t.same(await allGone([...a.pids, ...grandchildren]), [], 'no runner and no command left');
  },
);

function readFileSyncDir(dir: string): number[] {
  return readdirSync(dir).map((f) => Number(readFileSync(join(dir, f), 'utf8').trim()) || Number(f));
}

t.test('a failed rank stops its siblings; after its restart the whole instance comes back to Ready', async (t) => {
  const dir = tempDir(t);
  const { managers, events } = localCluster(t, ['a', 'b'], dir, {
    policy: { initialDelayMs: 200, factor: 2, maxDelayMs: 2000, maxRestarts: 3, periodMs: 60_000 },
  });
  const instance = await loopbackInstance('f2', ['a', 'b'], { kind: 'ring' });
  for (const m of managers.values()) m.instanceCreated(instance);
  const ready = (n: string) => statesOf(events.get(n)!).filter((s) => s === 'Ready').length;
  await waitFor(() => ready('a') === 1 && ready('b') === 1, 90_000, 'both Ready');
  process.kill(managers.get('b')!.runners()[0]!.pid!, 'SIGKILL');
  await waitFor(() => ready('a') === 2 && ready('b') === 2, 90_000, 'both Ready again');
  t.same(statesOf(events.get('b')!).slice(7, 9), ['Failed', 'Idle'], 'b: Failed, then restarted');
  t.same(
    statesOf(events.get('a')!).slice(7, 10),
    ['ShuttingDown', 'Shutdown', 'Idle'],
    'a: stopped because b failed, then started again',
  );
  t.equal(managers.get('a')!.runners()[0]!.failures, 0, 'a sibling stop is not a failure');
  for (const m of managers.values())
    m.taskCreated({ taskId: 'after', instanceId: 'f2', kind: 'all-reduce', params: { count: 1000 } });
  await waitFor(
    () =>
      events.get('a')!.some((e) => e.type === 'TaskStatusChanged' && e.taskId === 'after' && e.status === 'complete'),
    20_000,
    'task after recovery',
  );
  t.match(
    events.get('a')!.find((e) => e.type === 'TaskStatusChanged' && e.status === 'complete'),
    { result: { wrong: 0 } },
  );
});
