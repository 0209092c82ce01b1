/**
 * With the data dir on a small tmpfs that a job fills, the oldest finished runs go first, at once, while the running
 * job goes on being supervised. Needs root (it mounts the tmpfs): in the lab set, so that CI runs it as root.
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runnerDir } from '../../../src/actors/runner-supervisor/shared/run-dir.js';
import { diskUsagePercent, RunCollector } from '../../../src/actors/runner-supervisor/supervisor/run-collector.js';
import { skipOrFail } from '../../fixtures/skip-or-fail.js';
import { tempDir, waitFor } from './fixtures/helpers.js';
import { PACED_PRINTER } from './fixtures/paced-printer.js';
import { dirName, manager } from './fixtures/run-collection.js';

const tmpfsWhy = process.getuid?.() === 0 ? undefined : 'needs root to mount a tmpfs';

t.test(
  'a data dir on a small tmpfs that a job fills: the oldest finished runs go first, the job goes on',
  { skip: skipOrFail(tmpfsWhy) },
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
