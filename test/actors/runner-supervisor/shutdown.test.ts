import t from 'tap';
import { join } from 'node:path';
import { readyRunner } from './fixtures/ready-runner.js';
import { allGone, localCluster, loopbackInstance, statesOf, tempDir, waitFor } from './fixtures/helpers.js';

const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));

t.test('a runner that ignores SIGTERM is SIGKILLed within the deadline', async (t) => {
  const dir = tempDir(t);
  const { proc } = await readyRunner(t, dir, { TORUS_RUNNER_TEST_HOOKS: '1', TORUS_RUNNER_TEST_HOOK: 'hang' });
  const pid = proc.pid!;
  const started = Date.now();
  const exit = await proc.shutdown({ gracefulMs: 400, termMs: 400, killMs: 2000 });
  const took = Date.now() - started;
  t.equal(exit.signal, 'SIGKILL', 'killed by SIGKILL');
  t.ok(exit.expected, 'an exit we asked for');
  t.ok(took >= 800 && took < 2500, `escalated within the deadlines (${took} ms)`);
  t.match(exit.diagnostics.join('\n'), /SIGTERM[\s\S]*SIGKILL/, 'diagnostics say why');
  t.same(await allGone([pid]), []);
});

t.test(
  'node shutdown with runners mid-task: all runners and their commands gone, no unhandled rejection',
  async (t) => {
    const dir = tempDir(t);
    const { managers, events } = localCluster(t, ['a', 'b'], dir, {
      deadlines: { gracefulMs: 2000, termMs: 1000, killMs: 1000 },
    });
    const pidFile = (n: string) => join(dir, `cmd-${n}`);
    const instances = [
      await loopbackInstance('m1', ['a', 'b'], {
        kind: 'exec',
        command: ['sh', '-c', `echo $$ > ${dir}/cmd-$TORUS_INSTANCE_ID-$TORUS_RANK; exec sleep 60`],
      }),
      await loopbackInstance('m2', ['a'], {
        kind: 'exec',
        command: ['sh', '-c', `echo $$ > ${dir}/cmd-$TORUS_INSTANCE_ID-$TORUS_RANK; exec sleep 60`],
      }),
    ];
    for (const m of managers.values()) for (const i of instances) m.instanceCreated(i);
    await waitFor(
      () =>
        statesOf(events.get('a')!).filter((s) => s === 'Running').length === 2 &&
        statesOf(events.get('b')!).includes('Running'),
      60_000,
      'all Running',
    );
    const { readFileSync } = await import('node:fs');
    await waitFor(
      () =>
        ['m1-0', 'm1-1', 'm2-0'].every((n) => {
          try {
            return readFileSync(pidFile(n), 'utf8').trim() !== '';
          } catch {
            return false;
          }
        }),
      10_000,
      'pids',
    );
    const commands = ['m1-0', 'm1-1', 'm2-0'].map((n) => Number(readFileSync(pidFile(n), 'utf8')));
    const started = Date.now();
    await Promise.all([...managers.values()].map((m) => m.shutdown()));
    t.ok(Date.now() - started < 5000, 'within the deadlines');
    const pids = [...managers.values()].flatMap((m) => m.pids);
    t.equal(pids.length, 3);
    t.same(await allGone([...pids, ...commands]), [], 'no runner and no command left');
    t.same(unhandled, [], 'no unhandled rejection');
    for (const n of ['a', 'b']) t.equal(statesOf(events.get(n)!).at(-1), 'Shutdown', `${n} ends Shutdown`);
  },
);
