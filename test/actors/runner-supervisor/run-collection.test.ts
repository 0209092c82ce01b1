/**
 * Finished runs are collected: after K+10 finished jobs a node holds K runner directories (the newest), and a
 * running instance's directory is never removed whatever the retention says. The same on a small tmpfs that a job
 * fills needs root (a mount): run-collection-tmpfs-lab.test.ts.
 */
import t from 'tap';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runnerDir } from '../../../src/actors/runner-supervisor/shared/run-dir.js';
import { RunCollector } from '../../../src/actors/runner-supervisor/supervisor/run-collector.js';
import { tempDir, waitFor } from './fixtures/helpers.js';
import { dirName, manager } from './fixtures/run-collection.js';

t.test('after K+10 finished runs the node keeps the newest K, and never a running instance’s', async (t) => {
  const dataDir = tempDir(t);
  const K = 3;
  const { facts, run, held } = manager(t, dataDir);
  await run('long', ['sh', '-c', 'echo still here; exec sleep 120']);
  for (let i = 0; i < K + 10; i++) {
    const id = `job-${String(i).padStart(2, '0')}`;
    await run(id, ['sh', '-c', `echo run ${i}`]);
    await waitFor(() => facts[id]?.status === 'completed', 60_000, `${id} completed`);
  }
  const removed: string[] = [];
  const collector = new RunCollector({
    dataDir,
    nodeId: 'n',
    retention: { keepFinished: K, maxAgeMs: 0, diskUsagePercent: 100 },
    onRemoved: (name) => removed.push(name),
  });
  // The completed runs' processes may still be held while they stop.
  await waitFor(() => held().length === 1, 30_000, 'only the long runner held');
  await collector.collect({ instances: facts, held: held() });
  const left = readdirSync(join(dataDir, 'runners')).sort();
  const newest = Array.from({ length: K }, (_, i) => dirName(dataDir, `job-${String(10 + i).padStart(2, '0')}`));
  t.same(left, [dirName(dataDir, 'long'), ...newest].sort(), `the running instance and the newest ${K} finished`);
  t.same(
    removed,
    Array.from({ length: 10 }, (_, i) => dirName(dataDir, `job-${String(i).padStart(2, '0')}`)),
    'the 10 oldest removed, oldest first',
  );

  // A retention that keeps nothing, ages everything and finds the disk always full still spares the running one.
  const harsh = new RunCollector({
    dataDir,
    nodeId: 'n',
    retention: { keepFinished: 0, maxAgeMs: 1, diskUsagePercent: 1 },
  });
  await harsh.collect({ instances: facts, held: held(), nowMs: Date.now() + 3_600_000 });
  t.same(readdirSync(join(dataDir, 'runners')), [dirName(dataDir, 'long')], 'only the running instance is left');
  t.ok(existsSync(join(runnerDir(dataDir, 'long', 'n'), 'hostfile.json')), 'its files intact');
  // Not held by the manager but active in the cluster state (about to start, or restarting): spared too.
  await harsh.collect({ instances: facts, held: [] });
  t.ok(existsSync(runnerDir(dataDir, 'long', 'n')), 'an active instance of the state is spared without the manager');
});
