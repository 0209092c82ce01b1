/** Real sockets on loopback, several ClusterNodes in one process, the topology replica. */
import t from 'tap';
import { ClusterNode } from '../../../src/actors/cluster/cluster-node.js';
import { topologyReplica } from '../../../src/actors/cluster/topology-state.js';
import type { ClusterState } from '../../../src/actors/topology-keeper/state.js';
import { TorusError } from '../../../src/protocols/errors.js';
import { until } from './fixtures/until.js';

const timings = {
  heartbeatMs: 100,
  failureTimeoutMs: 800,
  settleMs: 300,
  electionStaggerMs: 100,
  candidateTimeoutMs: 500,
  gapRetryMs: 200,
};

function makeNode(
  t: { teardown(fn: () => unknown): void },
  id: string,
  peers: string[],
  extra: Partial<ConstructorParameters<typeof ClusterNode<ClusterState>>[0]> = {},
) {
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
    ...extra,
  });
  t.teardown(() => node.stop());
  return node;
}

t.test('three nodes on loopback form one cluster and agree', async (t) => {
  const a = makeNode(t, 'a', []);
  const pa = await a.start();
  const b = makeNode(t, 'b', [`127.0.0.1:${pa}`]);
  const pb = await b.start();
  // c only knows b: gossip must introduce it to a
  const c = makeNode(t, 'c', [`127.0.0.1:${pb}`]);
  await c.start();
  const nodes = [a, b, c];
  await until(
    'full mesh and one leader',
    () => nodes.every((n) => n.members().length === 2) && nodes.filter((n) => n.role().role === 'leader').length === 1,
  );
  await until('3 nodes in every state', () => nodes.every((n) => Object.keys(n.state.nodes).length === 3));
  await until('equal digests', () => new Set(nodes.map((n) => n.digest())).size === 1);
  t.equal(a.role().role, 'leader', 'a started first');

  // A proposal from a follower is sequenced by the leader.
  const r = (await c.propose({ type: 'LinkUp', source: 'c', sink: 'a', ip: '127.0.0.1', linkType: 'ethernet' })) as {
    indices: number[];
  };
  t.equal(r.indices.length, 1);
  await until('link everywhere', () => nodes.every((n) => n.state.links.length === 1));
  // An invalid proposal is refused with the reason, nothing sequenced.
  const before = a.lastIndex();
  await t.rejects(c.propose({ type: 'LinkUp', source: 'c' }), { code: 'TORUS_PROTOCOL_INVALID' });
  t.equal(a.lastIndex(), before);
  // A command without a handler is a clear error, not silence.
  await t.rejects(b.command({ type: 'DeleteInstance', instanceId: 'x' }), { code: 'TORUS_INTERNAL' });
});

t.test('commands run on the leader and return its outcome or error', async (t) => {
  const onCommand = async (cmd: { type: string }) => {
    if (cmd.type === 'Fail') throw new TorusError('TORUS_PLACEMENT_REFUSED', 'nothing fits', { why: 'memory' });
    return { events: [], outcome: { handled: cmd.type } };
  };
  const a = makeNode(t, 'a', [], { onCommand });
  const pa = await a.start();
  const b = makeNode(t, 'b', [`127.0.0.1:${pa}`], { onCommand });
  await b.start();
  await until('leader known', () => b.role().leader === 'a');
  t.same(await b.command({ type: 'Ping' }), { outcome: { handled: 'Ping' }, indices: [] });
  await t.rejects(b.command({ type: 'Fail' }), { code: 'TORUS_PLACEMENT_REFUSED', message: 'nothing fits' });
});

t.test('leader stops: a follower takes over with the state intact', async (t) => {
  const a = makeNode(t, 'a', []);
  const pa = await a.start();
  const b = makeNode(t, 'b', [`127.0.0.1:${pa}`]);
  const pb = await b.start();
  const c = makeNode(t, 'c', [`127.0.0.1:${pa}`, `127.0.0.1:${pb}`]);
  await c.start();
  const nodes = [a, b, c];
  await until('3 members', () => nodes.every((n) => Object.keys(n.state.nodes).length === 3));
  await b.propose({ type: 'LinkUp', source: 'b', sink: 'c', ip: '127.0.0.1', linkType: 'ethernet' });
  await until('link', () => nodes.every((n) => n.state.links.length === 1));
  await a.stop();
  await until('new leader', () => b.role().role === 'leader' || c.role().role === 'leader', 6000);
  await until('a gone everywhere', () => [b, c].every((n) => !n.state.nodes.a), 6000);
  const [winner, other] = b.role().role === 'leader' ? [b, c] : [c, b];
  // b is older, but a node with a more complete log wins: either way the leader's log is the longest.
  t.ok(winner.lastIndex() >= other.lastIndex(), 'the survivor with the most complete log leads');
  t.equal(b.digest(), c.digest());
  t.equal(b.state.links.length, 1, 'the b→c link survived the leader change');
});

t.test('wrong secret is refused and listed with the reason', async (t) => {
  const a = makeNode(t, 'a', [], { secret: 's3cret' });
  const pa = await a.start();
  const b = makeNode(t, 'b', [`127.0.0.1:${pa}`], { secret: 'wrong' });
  await b.start();
  const c = makeNode(t, 'c', [`127.0.0.1:${pa}`], { secret: 's3cret' });
  await c.start();
  await until('c joins a', () => a.members().some((m) => m.nodeId === 'c'));
  await until('b listed on a', () => a.heard().some((h) => h.reason === 'auth-failure'));
  await until('a listed on b', () => b.heard().some((h) => h.reason === 'auth-failure'));
  t.notOk(
    a.members().some((m) => m.nodeId === 'b'),
    'b never joined',
  );
  t.equal(b.members().length, 0);
});

t.test('other cluster name: listed as other-cluster, never joined', async (t) => {
  const a = makeNode(t, 'a', []);
  const pa = await a.start();
  const x = makeNode(t, 'x', [`127.0.0.1:${pa}`], { clusterName: 'other' });
  await x.start();
  await until('x lists a', () => x.heard().some((h) => h.reason === 'other-cluster' && h.nodeId === 'a'));
  await until('a lists x', () => a.heard().some((h) => h.reason === 'other-cluster'));
  t.equal(a.members().length, 0);
});

t.test('a proposal made before any leader exists lands after the leader wrote its own NodeJoined', async (t) => {
  const a = makeNode(t, 'solo', []);
  await a.start();
  const profile = {
    type: 'NodeProfileUpdated',
    nodeId: 'solo',
    interfaces: [{ name: 'eth0', ips: ['127.0.0.1'], type: 'ethernet' }],
    memory: { ramTotal: 2, ramAvailable: 1, swapTotal: 0, swapAvailable: 0 },
  };
  t.equal(a.role().leader, null, 'no leader yet');
  await a.propose(profile);
  t.ok(a.state.nodes.solo?.profile, 'the profile applied to a known node');
});

t.test('incompatible version and unreachable peers are listed with their reason', async (t) => {
  const { connect, createServer } = await import('node:net');
  const { pack } = await import('msgpackr');
  // a port nobody listens on
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const deadPort = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  const a = makeNode(t, 'a', [`127.0.0.1:${deadPort}`]);
  const pa = await a.start();
  // a peer of a future protocol version (its hello has fields this version does not know)
  const body = Buffer.from(pack({ type: 'hello', v: 99, nodeId: 'future', cluster: 'x', somethingNew: true }));
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  const s = connect(pa, '127.0.0.1', () => s.write(Buffer.concat([head, body])));
  s.on('error', () => undefined);
  t.teardown(() => s.destroy());
  await until('future listed', () =>
    a.heard().some((h) => h.reason === 'incompatible-version' && h.nodeId === 'future'),
  );
  await until(
    'dead peer listed',
    () => a.heard().some((h) => h.reason === 'unreachable' && h.address === `127.0.0.1:${deadPort}`),
    10000,
  );
  t.pass('both listed');
});
