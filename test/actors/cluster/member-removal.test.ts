/**
 * Recovery from a poisoned membership: the state lists members that will never come back, the
 * live node has no quorum and refuses writes; the operator removes a dead member and writes work again.
 */
import t from 'tap';
import { ClusterNode } from '../../../src/actors/cluster/cluster-node.js';
import { topologyReplica } from '../../../src/actors/cluster/topology-state.js';
import type { ClusterState } from '../../../src/actors/topology-keeper/state.js';
import { TorusError } from '../../../src/protocols/errors.js';
import { sleep, until } from './fixtures/until.js';

const timings = {
  heartbeatMs: 100,
  failureTimeoutMs: 1000,
  settleMs: 300,
  electionStaggerMs: 100,
  candidateTimeoutMs: 500,
  gapRetryMs: 200,
};
const KEY = '5eed'.repeat(16);

function makeNode(t: { teardown(fn: () => unknown): void }, id: string, peers: string[]): ClusterNode<ClusterState> {
  const node = new ClusterNode<ClusterState>({
    nodeId: id,
    incarnation: 1,
    clusterName: 'test',
    replica: topologyReplica,
    peers,
    host: '127.0.0.1',
    mdns: false,
    addresses: ['127.0.0.1'],
    timings,
    tickMs: 20,
    secret: KEY,
    commandTimeoutMs: 3000,
  });
  t.teardown(() => node.stop());
  return node;
}

const link = { type: 'LinkUp', source: 'a', sink: 'a', ip: '127.0.0.1', linkType: 'ethernet' };
const code = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof TorusError ? e.code : String(e)),
  );

t.test('a node whose state lists dead members regains writes after the operator removes one', async (t) => {
  const a = makeNode(t, 'a', []);
  const pa = await a.start();
  const b = makeNode(t, 'b', [`127.0.0.1:${pa}`]);
  await b.start();
  const c = makeNode(t, 'c', [`127.0.0.1:${pa}`]);
  await c.start();
  const d = makeNode(t, 'd', [`127.0.0.1:${pa}`]);
  await d.start();
  await until(
    'four members',
    () => [a, b, c, d].every((n) => Object.keys(n.state.nodes).length === 4) && a.role().leader !== null,
  );
  t.equal(
    await code(a.removeMember('a')),
    'TORUS_MEMBER_SELF',
    'a node cannot remove itself (a conflict with state, 409)',
  );
  t.equal(await code(a.removeMember('nobody')), 'TORUS_NODE_UNKNOWN', 'an unknown id is refused');
  t.equal(await code(a.removeMember('b')), 'TORUS_MEMBER_CONNECTED', 'a connected member is refused');
  t.equal(Object.keys(a.state.nodes).length, 4, 'nothing changed');

  // With a leader, removing a dead member is a command the leader writes at once (not after the failure timeout).
  await d.stop();
  const t0 = Date.now();
  await until(
    'd disconnected',
    () => !b.members().some((m) => m.nodeId === 'd') && !a.members().some((m) => m.nodeId === 'd'),
  );
  const r1 = await b.removeMember('d');
  t.equal(r1.status, 'removed', r1.message);
  await until('d gone everywhere', () => [a, b, c].every((n) => !n.state.nodes.d));
  t.ok(Date.now() - t0 < 1500, `removed in ${Date.now() - t0} ms`);

  // b and c die at once: a is 1 of 3, the NodeGone the leader would write needs a quorum it no longer has.
  await Promise.all([b.stop(), c.stop()]);
  await until('a lost its quorum', () => !a.role().quorum.ok && a.role().leader === null, 8000);
  await sleep(1500);
  t.equal(await code(a.propose(link)), 'TORUS_NO_QUORUM', 'writes are refused');
  t.equal(Object.keys(a.state.nodes).length, 3, 'the state still lists 3 members (poisoned)');

  const r = await a.removeMember('b');
  t.equal(r.status, 'pending', `no leader: the removal waits for one (${r.message})`);
  await until('a leads again and wrote NodeGone(b)', () => a.role().role === 'leader' && !a.state.nodes.b, 8000);
  t.notOk(a.state.nodes.b, 'b is no longer a member');
  t.equal(await code(a.propose(link)), 'ok', 'writes work again (1 of 2 members, with the lowest id)');
  // With a leader, removing c is a command the leader writes at once.
  await until('and the leader writes the other dead member gone by the usual rule', () => !a.state.nodes.c);
  t.same(Object.keys(a.state.nodes), ['a']);
});
