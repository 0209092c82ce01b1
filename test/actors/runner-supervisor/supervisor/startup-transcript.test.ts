/**
 * Transcript of multi-node start-up: N simulated runners, each step decided by decideNextStep over everyone's
 * statuses. Collective steps finish only when every rank has joined (connect, warm-up), as with MLX; local
 * steps (load, tasks) finish at once. The printed rounds are kept as a golden file: it shows the last rank
 * connecting last, loading only after all are connected, rank 0 warming up last, tasks only when all Ready.
 */
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { decideNextStep } from '../../../../src/actors/runner-supervisor/supervisor/coordination.js';
import type { RunnerState, RunnerStatus } from '../../../../src/protocols/runner-status.js';

function simulate(n: number, tasks: string[]): string {
  const status: RunnerState[] = Array.from({ length: n }, () => 'Idle');
  const pending = Array.from({ length: n }, () => [...tasks]);
  const lines: string[] = [];
  for (let round = 1; round <= 20; round++) {
    const snapshot = status.map((s): RunnerStatus => ({ state: s }) as RunnerStatus);
    const steps = snapshot.map((_, rank) =>
      decideNextStep({ rank, worldSize: n, statuses: snapshot, stepInFlight: false, pendingTasks: pending[rank]! }),
    );
    lines.push(`round ${round}: [${status.join(', ')}]`);
    steps.forEach((step, rank) =>
      lines.push(
        `  rank ${rank}: ${step.kind === 'wait' ? `wait (${step.why})` : step.kind === 'run' ? `run ${step.taskId}` : step.kind}`,
      ),
    );
    // Apply: start what was decided.
    steps.forEach((step, rank) => {
      if (step.kind === 'connect') status[rank] = 'Connecting';
      if (step.kind === 'load') status[rank] = 'Loaded';
      if (step.kind === 'warmup') status[rank] = 'WarmingUp';
      if (step.kind === 'run') {
        status[rank] = 'Running';
        pending[rank]!.shift();
      }
    });
    // Collective steps complete once every rank has joined them.
    if (status.every((s) => s === 'Connecting' || s === 'Connected')) status.fill('Connected');
    if (status.every((s) => s === 'WarmingUp' || s === 'Ready')) status.fill('Ready');
    if (status.every((s) => s === 'Running' || s === 'Ready'))
      for (let r = 0; r < n; r++) if (status[r] === 'Running') status[r] = 'Ready';
    if (steps.every((s) => s.kind === 'wait') && status.every((s) => s === 'Ready')) {
      lines.push('all Ready, no task left');
      break;
    }
  }
  return `${lines.join('\n')}\n`;
}

t.test('start-up transcript (golden)', async (t) => {
  const text = ['# 3 ranks, one task', simulate(3, ['t1']), '# 1 rank, two tasks', simulate(1, ['t1', 't2'])].join(
    '\n',
  );
  const golden = new URL('../fixtures/startup-transcript.txt', import.meta.url);
  // Only an explicit TORUS_UPDATE_GOLDEN=1 writes the golden file: a missing one is a failure, never a new truth.
  if (process.env.TORUS_UPDATE_GOLDEN === '1') writeFileSync(golden, text);
  t.ok(existsSync(golden), 'the golden file exists (TORUS_UPDATE_GOLDEN=1 writes it from this run)');
  t.equal(
    text,
    existsSync(golden) ? readFileSync(golden, 'utf8') : '',
    'matches test/actors/runner-supervisor/fixtures/startup-transcript.txt (TORUS_UPDATE_GOLDEN=1 rewrites it)',
  );
});
