/**
 * A followed log (`follow=1` on the node holding the rank) does not end at the first quiet moment after the rank's
 * exit is known: the runner may write the command's last output after the exit was published (its pipe is read on
 * another path, and on a loaded node later), so the follow goes on until the log has stayed quiet for the end time.
 */
import t from 'tap';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openRunnerLog } from '../../../src/actors/runner-supervisor/runners/runner-logs.js';
import { runnerDir } from '../../../src/actors/runner-supervisor/runners/local-runner.js';
import { segmentName } from '../../../src/actors/runner-supervisor/runners/log-segments.js';
import { emptyState, type ClusterState } from '../../../src/actors/topology-keeper/state.js';
import { tempDir } from './fixtures/helpers.js';

t.test('bytes written a second after the exit was published still reach the follower', async (t) => {
  const dataDir = tempDir(t);
  const dir = runnerDir(dataDir, 'job', 'n1');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, segmentName('stdout', 0));
  appendFileSync(file, 'line 1\n');
  // The job has completed: the rank can no longer write (rankMayWrite is false from the start).
  const state = {
    ...emptyState,
    instances: {
      job: {
        plan: { nodes: ['n1'] },
        workload: { kind: 'exec' },
        status: 'completed',
        generation: 1,
        runners: {},
      },
    },
  } as unknown as ClusterState;
  const deps = {
    nodeId: 'n1',
    dataDir,
    state: async () => state,
    signPeer: () => {
      throw new Error('no peer here');
    },
    pollMs: 50,
    endQuietMs: 1500,
  } as unknown as Parameters<typeof openRunnerLog>[0];
  const late = setTimeout(() => appendFileSync(file, 'line 2\n'), 700);
  t.teardown(() => clearTimeout(late));
  const started = Date.now();
  const chunks: string[] = [];
  for await (const c of await openRunnerLog(
    deps,
    { instanceId: 'job', rank: 0, stream: 'stdout', follow: true },
    new AbortController().signal,
  ))
    chunks.push(Buffer.from(c).toString());
  const took = Date.now() - started;
  t.equal(chunks.join(''), 'line 1\nline 2\n', 'the late line was read');
  t.ok(
    took >= 700 + 1500 - 100 && took < 10_000,
    `and the follow ended once the log was quiet for the end time (${took} ms)`,
  );
});
