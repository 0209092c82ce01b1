import t from 'tap';
import { membershipChanges } from '../../../../src/actors/cluster/agreement/membership.js';

const d = (nodeId: string, incarnation = 1) => ({
  nodeId,
  incarnation,
  name: nodeId,
  apiPort: 1,
  peerPort: 2,
  version: 'v',
  addresses: [],
});
const m = (...ids: string[]) => ids.map((nodeId) => ({ nodeId, incarnation: 1 }));
const base = { selfId: 'a', leaderSince: 1000, failureTimeoutMs: 3000, freshMs: 1500 };

t.test('announces new and restarted nodes, declares silent ones gone', async (t) => {
  const r = membershipChanges({
    ...base,
    now: 5000,
    members: m('a', 'b', 'c', 'd'),
    live: [d('a'), d('b', 2), d('e')],
    lastHeard: { b: 4900, c: 1500, d: 4000 },
  });
  t.same(
    r.joined.map((x) => `${x.nodeId}@${x.incarnation}`),
    ['b@2', 'e@1'],
  );
  t.same(r.gone, [{ nodeId: 'c', silentMs: 3500 }], 'd was heard 1 s ago: not yet');
  t.equal(r.held, undefined);
});

t.test('a new leader gives never-heard members the timeout as grace, old silence counts at once', async (t) => {
  const members = m('a', 'b', 'x', 'old');
  const live = [d('a'), d('b')];
  const early = membershipChanges({ ...base, now: 1200, members, live, lastHeard: { b: 1100, old: -2500 } });
  t.same(
    early.gone.map((g) => g.nodeId),
    ['old'],
    'the previous leader, silent for long, goes at once',
  );
  const later = membershipChanges({ ...base, now: 4500, members, live, lastHeard: { b: 4400, old: -2500 } });
  t.same(
    later.gone.map((g) => g.nodeId),
    ['x', 'old'],
  );
  t.same(
    membershipChanges({ ...base, now: 9999, members, live: [d('a'), d('b'), d('x'), d('old')], lastHeard: {} }).gone,
    [],
    'live nodes never go',
  );
});

t.test('NodeGone only with a recent quorum of the current members (no shrinking to a quorum of one)', async (t) => {
  // c is cut off with everyone: b timed out first, a has not timed out yet but is silent as long.
  const cut = membershipChanges({
    ...base,
    selfId: 'c',
    now: 4100,
    members: m('a', 'b', 'c'),
    live: [d('c'), d('a')],
    lastHeard: { a: 1050, b: 1000 },
  });
  t.same(cut.gone, [], 'b is not declared gone: a, still "live", was not heard recently');
  t.match(cut.held, /reaches 1 of 3 members, needs 2/);
  // The same moment on the majority side: b is heard all the time.
  const ok = membershipChanges({
    ...base,
    selfId: 'a',
    now: 4100,
    members: m('a', 'b', 'c'),
    live: [d('a'), d('b')],
    lastHeard: { b: 4000, c: 1000 },
  });
  t.same(
    ok.gone.map((g) => g.nodeId),
    ['c'],
  );
  // Two nodes: the lowest id may declare the other gone on its own (exact half with the lowest id).
  t.same(
    membershipChanges({ ...base, now: 4100, members: m('a', 'b'), live: [d('a')], lastHeard: { b: 1000 } }).gone.map(
      (g) => g.nodeId,
    ),
    ['b'],
  );
  t.match(
    membershipChanges({ ...base, selfId: 'b', now: 4100, members: m('a', 'b'), live: [d('b')], lastHeard: { a: 1000 } })
      .held,
    /1 of 2/,
  );
});
