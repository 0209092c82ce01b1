/**
 * Rotation end to end on a 2-host lab cluster whose nodes rotate runner logs at 64 KiB and keep 3 files: a job whose
 * ranks each print ~750 KB (about a dozen rotations) leaves at most the cap on disk per stream; `torus run` prints
 * every line of every rank in order and exits with the job's code; a `follow=1` client of the logs route asked of
 * the node that does not hold the rank reads every line once, in order; a tail after the end holds the last line.
 */
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Lab, withLab } from '../../src/lab/index.js';
import { runnerDir } from '../../src/actors/runner-supervisor/shared/run-dir.js';
import { bytesOnDisk, listSegments } from '../../src/actors/runner-supervisor/shared/log-segments.js';
import { profiled } from '../actors/runner-supervisor/fixtures/lab-runners.js';
import { countInOrder, PACED_PRINTER } from '../actors/runner-supervisor/fixtures/paced-printer.js';
import { E2eCluster, e2eUnavailableReason } from './lab-cluster.js';
import { finished, startRun } from './fixtures/run-cli.js';
import { skipOrFail } from '../fixtures/skip-or-fail.js';

t.setTimeout(360_000);
const why = Lab.unavailableReason() ?? e2eUnavailableReason();
const ROTATE = { maxFiles: 3, maxFileBytes: 64 * 1024 };
const LINES = 15_000; // ~750 KB per rank at ~150 KB/s: about 11 rotations each

t.test(
  'logs rotate under run and follow=1: every line once and in order, at most the cap on disk, the job exit code',
  { timeout: 340_000, skip: skipOrFail(why) },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'torus-rotate-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const script = join(dir, 'printer.cjs');
    writeFileSync(script, PACED_PRINTER);
    await withLab(t, { hosts: 2 }, async (lab) => {
      const c = await E2eCluster.start(t, lab, {
        nodeArgs: () => [
          '--allow-exec',
          '--iface-type',
          'lan0=ethernet',
          '--log-max-files',
          String(ROTATE.maxFiles),
          '--log-max-file-bytes',
          String(ROTATE.maxFileBytes),
        ],
      });
      await c.converged(150_000, profiled);
      // A short pause first, so the follower below is connected before the first rotation.
      const run = startRun(c, 0, [
        '--min-nodes',
        '2',
        '--instance-id',
        'rot',
        '--',
        '/bin/sh',
        '-c',
        // Both ranks fail, but only once both have printed everything (the lab's namespaces share this file
        // system): a rank that failed first would stop the other mid-print, and its lines would never exist.
        `sleep 3; "${process.execPath}" "${script}" ${LINES} 150000; touch "${dir}/done-$TORUS_RANK"; ` +
          `for i in $(seq 600); do [ -e "${dir}/done-0" ] && [ -e "${dir}/done-1" ] && break; sleep 0.1; done; exit 3`,
      ]);
      const placed = await c.until(
        'the instance to be placed',
        async () => (await c.nodes[1]!.tryGet<{ nodes: string[] }>('/v1/instances/rot')) ?? null,
        60_000,
      );
      const holder0 = placed.nodes[0]!;
      const asker = c.nodes.find((n) => n.id !== holder0)!;
      // The instance was seen on node 1; the asker may be node 0, which must have applied it too (else: 404).
      await c.until(
        'the asker to know the instance',
        async () => (await asker.tryGet('/v1/instances/rot')) ?? null,
        60_000,
      );
      const follow = await asker.fetch('/v1/instances/rot/logs?rank=0&stream=stdout&follow=1');
      t.equal(follow.status, 200, 'follow=1 answered (asked of the node that does not hold rank 0)');
      const followed = follow.text();
      t.same(await finished(run, 180_000), { code: 3, signal: null }, "run exits with the job's code");
      const text = await followed;
      t.notMatch(text, /rotated away/, 'the follower kept up: nothing rotated away under it');
      t.equal(countInOrder(text), LINES, `follow=1 read all ${LINES} lines of rank 0 once, in order`);
      for (let r = 0; r < 2; r++) {
        const mine = run.out.stdout
          .split('\n')
          .filter((l) => l.startsWith(`[rank ${r} `))
          .map((l) => l.replace(/^\[rank \d+ \S+\] /, ''));
        t.equal(countInOrder(mine.join('\n')), LINES, `run printed all ${LINES} lines of rank ${r}, in order`);
      }
      for (const [rank, nodeId] of placed.nodes.entries()) {
        const node = c.nodes.find((n) => n.id === nodeId)!;
        const logDir = runnerDir(node.dataDir, 'rot', nodeId);
        const segments = await listSegments(logDir, 'stdout');
        const onDisk = await bytesOnDisk(segments);
        t.ok(segments.length <= ROTATE.maxFiles, `rank ${rank}: ${segments.length} files`);
        t.ok(onDisk <= ROTATE.maxFiles * ROTATE.maxFileBytes, `rank ${rank}: ${onDisk} B on disk, within the cap`);
        t.ok(segments.at(-1)!.base >= 3 * ROTATE.maxFileBytes, `rank ${rank}: ≥ 3 rotations`);
      }
      const tail = await (await asker.fetch('/v1/instances/rot/logs?rank=0&stream=stdout&tail=2048')).text();
      t.match(tail, new RegExp(`line ${LINES} x+\\n$`), 'a tail after the end holds the last line');
    });
  },
);
