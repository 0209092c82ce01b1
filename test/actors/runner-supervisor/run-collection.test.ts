/**
 * Finished runs are collected: after K+10 finished jobs a node holds K runner directories (the newest), a running
 * instance's directory is never removed whatever the retention says, and with the data dir on a small tmpfs that
 * a job fills, the oldest finished runs go first, at once, while the running job goes on being supervised.
 */
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RunnerManager, type ManagerEvent } from '../../../src/actors/runner-supervisor/runners/runner-manager.js';
import { runnerDir } from '../../../src/actors/runner-supervisor/runners/local-runner.js';
import { diskUsagePercent, RunCollector } from '../../../src/actors/runner-supervisor/runners/run-collector.js';
import type { InstanceFacts } from '../../../src/actors/runner-supervisor/runners/finished-runs.js';
import { loopbackInstance, tempDir, waitFor } from './fixtures/helpers.js';
import { PACED_PRINTER } from './fixtures/paced-printer.js';

const EXEC = (command: string[]) => ({ kind: 'exec' as const, command });

/** A manager whose instances' facts follow its own events (completed when every rank exited 0). */
function manager(t: Test, dataDir: string, extra: { logRotation?: { maxFiles: number; maxFileBytes: number } } = {}) {
  const events: ManagerEvent[] = [];
  const facts: Record<string, InstanceFacts> = {};
  const m = new RunnerManager({
    nodeId: 'n',
    dataDir,
    allowExec: true,
    ...extra,
    onEvent: (e) => {
      events.push(e);
      if (e.type !== 'InstanceCompleted') return;
      facts[e.instanceId] = { status: 'completed', workload: { kind: 'exec' } };
      void m.instanceDeleted(e.instanceId); // what the supervisor does once the state says completed
    },
  });
  t.teardown(() => m.shutdown());
  const run = async (id: string, command: string[]): Promise<void> => {
    facts[id] = { status: 'active', workload: { kind: 'exec' } };
    m.instanceCreated(await loopbackInstance(id, ['n'], EXEC(command)));
  };
  const held = (): string[] => m.runners().map((r) => r.instanceId);
  return { m, events, facts, run, held };
}

const dirName = (dataDir: string, id: string): string => basename(runnerDir(dataDir, id, 'n'));

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

const tmpfsWhy = process.getuid?.() === 0 ? undefined : 'needs root to mount a tmpfs';

t.test(
  'a data dir on a small tmpfs that a job fills: the oldest finished runs go first, the job goes on',
  { skip: tmpfsWhy ?? false },
  async (t) => {
    const mount = tempDir(t, 'torus-tmpfs-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0700', 'tmpfs', mount]);
    t.teardown(() => {
      execFileSync('umount', ['-l', mount]);
    });
    const dataDir = join(mount, 'data');
    mkdirSync(dataDir, { mode: 0o700 });
    const script = join(mount, 'printer.cjs');
    writeFileSync(script, PACED_PRINTER);
    // 1 MiB files, up to 10 per stream: the filling job's log can outgrow the whole tmpfs.
    const { facts, run, held, events } = manager(t, dataDir, { logRotation: { maxFiles: 10, maxFileBytes: 1 << 20 } });
    const finished = ['old-0', 'old-1', 'old-2', 'old-3', 'old-4'];
    for (const id of finished) {
      await run(id, [process.execPath, script, '30000', '50000000']); // ~1.4 MB each
      await waitFor(() => facts[id]?.status === 'completed', 60_000, `${id} completed`);
      await sleep(20); // distinct write times, so "oldest" is well defined
    }
    const before = (await diskUsagePercent(dataDir))!;
    t.ok(before < 60, `the finished runs use ${before.toFixed(0)} % of the tmpfs`);
    const removed: string[] = [];
    const collector = new RunCollector({
      dataDir,
      nodeId: 'n',
      retention: { keepFinished: 50, maxAgeMs: 0, diskUsagePercent: 60 },
      onRemoved: (name, why) => removed.push(`${name} ${why}`),
    });
    await run('filler', [process.execPath, script, '400000', '20000000']); // ~19 MB: more than the tmpfs holds
    let peak = before;
    // The node's supervisor collects at every state poll; here the same pass runs until the job ends.
    while (!events.some((e) => e.type === 'InstanceCompleted' && e.instanceId === 'filler')) {
      peak = Math.max(peak, (await diskUsagePercent(dataDir)) ?? 0);
      await collector.collect({ instances: facts, held: held() });
      await sleep(50);
    }
    t.ok(peak < 100, `the tmpfs never filled (peak ${peak.toFixed(0)} %)`);
    await collector.collect({ instances: facts, held: held() });
    t.ok(removed.length >= 1, `finished runs removed under low disk: ${removed.join(', ')}`);
    const order = removed.map((r) => r.split(' ')[0]);
    t.same(order, finished.map((id) => dirName(dataDir, id)).slice(0, order.length), 'oldest first');
    t.ok(
      removed.every((r) => r.endsWith('low disk')),
      'each for low disk',
    );
    t.ok(existsSync(runnerDir(dataDir, 'filler', 'n')), "the running job's directory stayed");
    t.ok(
      events.some((e) => e.type === 'InstanceCompleted' && e.instanceId === 'filler'),
      'the filling job ran to its end (its runner supervised throughout)',
    );
    rmSync(dataDir, { recursive: true, force: true });
  },
);
