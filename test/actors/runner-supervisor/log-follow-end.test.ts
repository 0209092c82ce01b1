/**
 * Where a followed log (`follow=1` on the node holding the rank) ends. A rank's end is published only once the output
 * before it is in the log files (runner-process.ts), so the follower ends at the read that follows seeing the end,
 * with every byte, and does not wait for a quiet spell. A job that failed on another rank ends this rank when this
 * rank's runner says it stopped, not at the failure: the rank is still being stopped and may still write.
 */
import t, { type Test } from 'tap';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openRunnerLog } from '../../../src/actors/runner-supervisor/main/runner-logs.js';
import { runnerDir } from '../../../src/actors/runner-supervisor/shared/run-dir.js';
import { segmentName } from '../../../src/actors/runner-supervisor/shared/log-segments.js';
import { emptyState, type ClusterState } from '../../../src/actors/topology-keeper/state.js';
import { tempDir } from './fixtures/helpers.js';

function job(status: string, runner?: Record<string, unknown>): ClusterState {
  return {
    ...emptyState,
    instances: {
      job: {
        plan: { nodes: ['n1'] },
        workload: { kind: 'exec' },
        status,
        generation: 1,
        runners: runner ? { n1: runner } : {},
      },
    },
  } as unknown as ClusterState;
}

/** Follows rank 0's stdout to its end; `state` is asked before every wait, with how many times it was asked. */
async function follow(dataDir: string, state: (asked: number) => ClusterState): Promise<string> {
  let asked = 0;
  const deps = {
    nodeId: 'n1',
    dataDir,
    state: async () => state(asked++),
    signPeer: () => {
      throw new Error('no peer here');
    },
    pollMs: 20,
  } as unknown as Parameters<typeof openRunnerLog>[0];
  const chunks: string[] = [];
  const log = await openRunnerLog(
    deps,
    { instanceId: 'job', rank: 0, stream: 'stdout', follow: true },
    new AbortController().signal,
  );
  for await (const c of log) chunks.push(Buffer.from(c).toString());
  return chunks.join('');
}

function logFile(t: Test): { dataDir: string; file: string } {
  const dataDir = tempDir(t);
  const dir = runnerDir(dataDir, 'job', 'n1');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, segmentName('stdout', 0));
  appendFileSync(file, 'line 1\n');
  return { dataDir, file };
}

t.test('a completed job: the follower reads to the end of the log and stops there', async (t) => {
  const { dataDir, file } = logFile(t);
  appendFileSync(file, 'line 2\n');
  t.equal(await follow(dataDir, () => job('completed')), 'line 1\nline 2\n', 'every line, then the end');
});

t.test('bytes written just before the end was seen are read by the last read', async (t) => {
  const { dataDir, file } = logFile(t);
  // The rank's command is still running when first asked; its last line lands as its exit is published.
  const text = await follow(dataDir, (asked) => {
    if (asked < 3) return job('active', { status: 'Running' });
    if (asked === 3) appendFileSync(file, 'line 2\n');
    return job('active', { status: 'Ready', exitCode: 0 });
  });
  t.equal(text, 'line 1\nline 2\n');
});

t.test('a job failed by another rank: followed until this rank stopped, not until the failure', async (t) => {
  const { dataDir, file } = logFile(t);
  // Failed from the first question on; this rank is being stopped for 150 questions (3 s of polls, longer than a
  // follower that waits for a quiet spell would wait), then writes its last line and stops.
  const text = await follow(dataDir, (asked) => {
    if (asked < 150) return job('failed', { status: 'ShuttingDown' });
    if (asked === 150) appendFileSync(file, 'line 2\n');
    return job('failed', { status: 'Shutdown' });
  });
  t.equal(text, 'line 1\nline 2\n', "the stopped rank's last line was read");
});

t.test('a job failed by another rank: a rank whose runner never reported has nothing to wait for', async (t) => {
  const { dataDir } = logFile(t);
  t.equal(await follow(dataDir, () => job('failed')), 'line 1\n');
});
