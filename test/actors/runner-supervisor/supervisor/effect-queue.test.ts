import t from 'tap';
import { EffectQueue } from '../../../../src/actors/runner-supervisor/supervisor/effect-queue.js';
import type { SupervisorEffect } from '../../../../src/actors/runner-supervisor/supervisor/reactions.js';
import type { RunnerInstance } from '../../../../src/protocols/runner-instance.js';

const instance = (id: string): RunnerInstance =>
  ({
    id,
    backend: 'ring',
    sharding: 'pipeline',
    nodes: ['a'],
    port: 5000,
    shards: [{ node: 'a', rank: 0, worldSize: 1, startLayer: 0, endLayer: 1 }],
    workload: { kind: 'ring' },
  }) as RunnerInstance;

const start = (id: string): SupervisorEffect => ({ type: 'start', instance: instance(id) });
const replace = (id: string): SupervisorEffect => ({ type: 'replace', instance: instance(id) });
const stop = (id: string): SupervisorEffect => ({ type: 'stop', instanceId: id, reason: 'deleted' });
const task = (id: string, taskId: string): SupervisorEffect => ({ type: 'task', taskId, instanceId: id, kind: 'k' });
const cancel = (taskId: string): SupervisorEffect => ({ type: 'cancel', taskId });
const name = (e: SupervisorEffect): string =>
  e.type === 'start' || e.type === 'replace'
    ? `${e.type} ${e.instance.id}`
    : e.type === 'cancel'
      ? `cancel ${e.taskId}`
      : e.type === 'task'
        ? `task ${e.instanceId}/${e.taskId}`
        : `${e.type} ${e.instanceId}`;

/** A queue whose every perform waits until the test releases it, recording the order effects ran in. */
function gated(): { queue: EffectQueue; ran: string[]; release: () => Promise<void> } {
  const ran: string[] = [];
  let open: (() => void) | undefined;
  const queue = new EffectQueue(
    (e) =>
      new Promise<void>((resolve) => {
        ran.push(name(e));
        open = resolve;
      }),
    () => undefined,
  );
  const release = async (): Promise<void> => {
    for (let i = 0; i < 1000 && !open; i++) await new Promise((r) => setImmediate(r));
    const go = open;
    open = undefined;
    go?.();
    await new Promise((r) => setImmediate(r));
  };
  return { queue, ran, release };
}

async function runAll(g: ReturnType<typeof gated>): Promise<void> {
  while (g.queue.pending > 0) await g.release();
  await g.release();
  await g.queue.idle();
}

t.test('effects run one at a time, in the order pushed', async (t) => {
  const g = gated();
  g.queue.push(start('a'));
  await new Promise((r) => setImmediate(r));
  for (const e of [start('b'), stop('a'), task('b', 't1')]) g.queue.push(e);
  await new Promise((r) => setImmediate(r));
  t.same(g.ran, ['start a'], 'the second waits for the first');
  await runAll(g);
  t.same(g.ran, ['start a', 'start b', 'stop a', 'task b/t1']);
  t.equal(g.queue.skipped, 0, 'a stop of a started instance drops nothing');
});

t.test('a stop takes its instance start, and what was queued for it, while the start waits', async (t) => {
  const g = gated();
  g.queue.push(stop('busy')); // performing: the queue is behind
  await new Promise((r) => setImmediate(r));
  for (const e of [start('x'), start('y'), task('x', 't1'), cancel('t0'), stop('x')]) g.queue.push(e);
  t.equal(g.queue.skipped, 2, 'start x and its task');
  await runAll(g);
  t.same(g.ran, ['stop busy', 'start y', 'cancel t0', 'stop x'], 'x never starts; its stop still runs');
});

t.test('a stop keeps what came before the start it drops', async (t) => {
  const g = gated();
  g.queue.push(stop('busy'));
  await new Promise((r) => setImmediate(r));
  // x ran an earlier plan: its replacement and the peer status after it go, the earlier task stays.
  for (const e of [task('x', 'early'), replace('x'), task('x', 'late'), stop('x'), start('x')]) g.queue.push(e);
  await runAll(g);
  t.same(g.ran, ['stop busy', 'task x/early', 'stop x', 'start x'], 'a start after the stop runs');
  t.equal(g.queue.skipped, 2);
});

t.test('a stop whose start already ran drops nothing', async (t) => {
  const g = gated();
  g.queue.push(start('x'));
  await new Promise((r) => setImmediate(r));
  g.queue.push(task('x', 't1'));
  g.queue.push(stop('x'));
  await runAll(g);
  t.same(g.ran, ['start x', 'task x/t1', 'stop x']);
  t.equal(g.queue.skipped, 0);
});

t.test('a failing effect is reported and the next one still runs', async (t) => {
  const ran: string[] = [];
  const failed: string[] = [];
  const queue = new EffectQueue(
    (e) => {
      ran.push(name(e));
      if (e.type === 'start') throw new Error('spawn failed');
    },
    (e, error) => failed.push(`${name(e)}: ${(error as Error).message}`),
  );
  queue.push(start('a'));
  queue.push(stop('b'));
  t.same(ran, [], 'nothing runs inside push');
  await queue.idle();
  t.same(ran, ['start a', 'stop b']);
  t.same(failed, ['start a: spawn failed']);
});

t.test('an effect that pushes another while it runs does not start a second drain', async (t) => {
  let active = 0;
  let most = 0;
  const ran: string[] = [];
  const queue: EffectQueue = new EffectQueue(
    async (e) => {
      active += 1;
      most = Math.max(most, active);
      ran.push(name(e));
      if (e.type === 'start') queue.push(task(e.instance.id, 'from-start'));
      await new Promise((r) => setImmediate(r));
      active -= 1;
    },
    () => undefined,
  );
  queue.push(start('a'));
  queue.push(start('b'));
  await queue.idle();
  t.equal(most, 1, 'one at a time');
  t.same(ran, ['start a', 'start b', 'task a/from-start', 'task b/from-start']);
});

t.test('close: nothing more runs; the effect being performed finishes', async (t) => {
  const g = gated();
  g.queue.push(start('a'));
  g.queue.push(start('b'));
  await new Promise((r) => setImmediate(r));
  const closed = g.queue.close();
  g.queue.push(start('c'));
  await g.release();
  await closed;
  t.same(g.ran, ['start a']);
  t.equal(g.queue.pending, 0);
});
