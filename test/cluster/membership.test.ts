import t from 'tap';
import { membershipChanges } from '../../src/cluster/membership.js';

const d = (nodeId: string, incarnation = 1) => ({ nodeId, incarnation, name: nodeId, apiPort: 1, peerPort: 2, version: 'v', addresses: [] });
const base = { selfId: 'a', leaderSince: 1000, failureTimeoutMs: 3000 };

t.test('announces new and restarted nodes, declares silent ones gone', async (t) => {
  const r = membershipChanges({ ...base, now: 5000, members: [{ nodeId: 'a', incarnation: 1 }, { nodeId: 'b', incarnation: 1 }, { nodeId: 'c', incarnation: 1 }, { nodeId: 'd', incarnation: 1 }],
    live: [d('a'), d('b', 2), d('e')], lastHeard: { c: 1500, d: 4000 } });
  t.same(r.joined.map((x) => `${x.nodeId}@${x.incarnation}`), ['b@2', 'e@1']);
  t.same(r.gone, [{ nodeId: 'c', silentMs: 3500 }], 'd was heard 1 s ago: not yet');
});

t.test('a new leader gives never-heard members the timeout as grace, old silence counts at once', async (t) => {
  const members = [{ nodeId: 'a', incarnation: 1 }, { nodeId: 'x', incarnation: 1 }, { nodeId: 'old', incarnation: 1 }];
  const early = membershipChanges({ ...base, now: 1200, members, live: [d('a')], lastHeard: { old: -2500 } });
  t.same(early.gone.map((g) => g.nodeId), ['old'], 'the previous leader, silent for long, goes at once');
  const later = membershipChanges({ ...base, now: 4500, members, live: [d('a')], lastHeard: { old: -2500 } });
  t.same(later.gone.map((g) => g.nodeId), ['x', 'old']);
  t.same(membershipChanges({ ...base, now: 9999, members, live: [d('a'), d('x'), d('old')], lastHeard: {} }).gone, [], 'live nodes never go');
});
