import t from 'tap';
import { StartGate } from '../../src/node/start-gate.js';

const tick = () => new Promise((r) => setImmediate(r));

t.test('a call before the actors started waits for them, then runs; later calls run at once', async (t) => {
  const gate = new StartGate();
  const calls: string[] = [];
  const guarded = gate.guard(async (what: string) => {
    calls.push(what);
    return `done ${what}`;
  });
  let early: string | undefined;
  const pending = guarded('early').then((v) => {
    early = v;
  });
  await tick();
  await tick();
  t.same(calls, [], 'not run while actors start');
  t.equal(early, undefined);
  gate.open();
  await pending;
  t.equal(early, 'done early');
  t.equal(await guarded('late'), 'done late');
  t.same(calls, ['early', 'late']);
});

t.test('a node that fails to start fails the waiting calls with its reason', async (t) => {
  const gate = new StartGate();
  let ran = false;
  const guarded = gate.guard(() => {
    ran = true;
    return 1;
  });
  const waiting = guarded();
  gate.fail(new Error('planner did not start'));
  await t.rejects(waiting, /planner did not start/);
  await t.rejects(guarded(), /planner did not start/, 'and later ones');
  t.notOk(ran, 'the handler never ran');
});
