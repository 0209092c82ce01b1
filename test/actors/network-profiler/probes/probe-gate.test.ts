/**
 * The probe gate on its own, with a hand-driven clock: the orders of arrival that a busy node sees, driven one
 * call at a time so each interleaving is exact rather than left to the scheduler.
 */
import t from 'tap';
import { ProbeGate } from '../../../../src/actors/network-profiler/probes/probe-gate.js';

function gate(nodeId: string): { gate: ProbeGate; clock: { now: number } } {
  const clock = { now: 1_000_000 };
  return { gate: new ProbeGate(nodeId, () => clock.now), clock };
}

t.test("two sessions' first connections, both before either transfer starts: only the first is admitted", async (t) => {
  const { gate: g } = gate('gate-race-1');
  const a = g.admitStream('session-a', 1, false, 300);
  const b = g.admitStream('session-b', 1, false, 300);
  t.ok(a, 'the first session is admitted');
  t.notOk(b, 'the second session is refused: the first holds the gate from the moment it was admitted');
  t.ok(g.busy(), 'busy while the first transfer runs');
  a?.release();
  t.notOk(g.busy(), 'free once it ends');
  t.ok(g.admitStream('session-b', 1, false, 300), 'the second session is admitted on its retry');
});

t.test('a session holds the gate between its own connections until all have come and gone', async (t) => {
  const { gate: g } = gate('gate-race-2');
  const a1 = g.admitStream('session-a', 2, false, 300);
  t.ok(a1, 'first connection of a two-connection session');
  a1?.release();
  t.notOk(
    g.admitStream('session-b', 1, false, 300),
    "another session is refused while the first session's second connection is still due",
  );
  t.notOk(g.acquire(false), 'and so is a bulk sink/source transfer');
  const a2 = g.admitStream('session-a', 2, false, 300);
  t.ok(a2, "the session's second connection is admitted");
  t.notOk(g.admitStream('session-a', 2, false, 300), 'a third connection beyond the announced two is not');
  a2?.release();
  t.notOk(g.busy(), 'the session ended with its last connection');
});

t.test('a session that never opens its other connections holds the gate only until it expires', async (t) => {
  const { gate: g, clock } = gate('gate-race-3');
  g.admitStream('session-a', 4, false, 300)?.release();
  clock.now += 300;
  t.ok(g.busy(), 'still held within its time bound plus grace');
  clock.now += 1000;
  t.notOk(g.busy(), 'expired');
  t.ok(g.admitStream('session-b', 1, false, 300), 'another session is admitted');
});

t.test('bulk transfers and stream sessions exclude each other; force overrides; releases are idempotent', async (t) => {
  const { gate: g } = gate('gate-race-4');
  const sink = g.acquire(false);
  t.ok(sink, 'a sink upload takes the gate');
  t.notOk(g.acquire(false), 'a second bulk transfer is refused');
  t.notOk(g.admitStream('session-a', 1, false, 300), 'a stream session is refused');
  const forced = g.admitStream('session-f', 1, true, 300);
  t.ok(forced, 'a forced (proven) session is admitted anyway');
  t.equal(g.active, 2, 'both counted');
  sink?.release();
  sink?.release();
  t.equal(g.active, 1, 'a second release of the same lease counts nothing');
  forced?.release();
  t.equal(g.active, 0);
  t.notOk(g.busy(), 'free');
});
