/**
 * A peer that speaks the protocol badly on purpose: garbage, oversized frames, appends with out-of-order and
 * duplicate indices, events for another term, forged leadership. No node may crash or diverge.
 */
import t from 'tap';
import { connect, type Socket } from 'node:net';
import { rawPeer } from './fixtures/raw-peer.js';
import { randomBytes } from 'node:crypto';
import { ClusterNode } from '../../../src/actors/cluster/cluster-node.js';
import { topologyReplica } from '../../../src/actors/cluster/topology-state.js';
import type { PeerFrame } from '../../../src/protocols/peer-frames.js';
import type { ClusterState } from '../../../src/actors/topology-keeper/state.js';
import { sleep, until } from './fixtures/until.js';

const timings = {
  heartbeatMs: 100,
  failureTimeoutMs: 1000,
  settleMs: 300,
  electionStaggerMs: 100,
  candidateTimeoutMs: 500,
  gapRetryMs: 200,
};

/** A joined hostile peer: it completes the open-mode handshake, then sends what it wants. */
async function evil(port: number, nodeId: string): Promise<Socket & { sendFrame(f: PeerFrame): void }> {
  const p = await rawPeer(port, nodeId, { complete: true });
  return Object.assign(p.socket, { sendFrame: (f: PeerFrame) => p.send(f) });
}

t.test('hostile peers cannot crash or corrupt a cluster', async (t) => {
  const nodes: ClusterNode<ClusterState>[] = [];
  const mk = async (id: string, peers: string[]) => {
    const n = new ClusterNode<ClusterState>({
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
    });
    t.teardown(() => n.stop());
    nodes.push(n);
    return n.start();
  };
  const pa = await mk('a', []);
  const pb = await mk('b', [`127.0.0.1:${pa}`]);
  await until('formed', () => nodes.every((n) => Object.keys(n.state.nodes).length === 2));
  const before = nodes[0]!.digest();

  // 1. garbage before any hello, and an oversized length prefix
  const g = connect(pb, '127.0.0.1', () => {
    g.write(randomBytes(3000));
  });
  g.on('error', () => undefined);
  const big = connect(pa, '127.0.0.1', () => {
    const h = Buffer.alloc(4);
    h.writeUInt32BE(0x7fffffff);
    big.write(h);
  });
  big.on('error', () => undefined);

  // 2. a joined peer forging appends: out of order, duplicates with other payloads, another term, fake leadership
  const term = nodes[1]!.role().term;
  const s = await evil(pb, 'evil');
  await sleep(200);
  const send = (f: PeerFrame) => s.sendFrame(f);
  send({
    type: 'heartbeat',
    term,
    role: 'leader',
    leader: 'evil',
    lastIndex: 1,
    lastTerm: term,
    lastHash: '0',
    commit: 0,
    commitHash: '0',
  });
  send({
    type: 'append',
    term,
    entries: [{ index: 3, term, event: { type: 'NodeGone', nodeId: 'a', reason: 'forged' } }],
    commit: 0,
    commitHash: '0',
  });
  send({
    type: 'append',
    term,
    entries: [{ index: 1, term, event: { type: 'NodeGone', nodeId: 'a', reason: 'forged' } }],
    commit: 0,
    commitHash: '0',
  });
  send({
    type: 'append',
    term: term + 5,
    entries: [{ index: 1, term: term + 5, event: { type: 'Bogus' } }],
    commit: 0,
    commitHash: '0',
  });
  send({ type: 'append', term: 1, entries: [], commit: 0, commitHash: '0' });
  send({
    type: 'snapshot',
    term: term + 9,
    index: 99,
    lastTerm: 1,
    lastHash: 'x',
    digest: 'nope',
    state: { not: 'a state' },
  });
  send({ type: 'vote-request', term: term + 50, lastIndex: 1_000_000, lastTerm: term + 50 });
  send({ type: 'gap-request', from: 1, to: 500, prevHash: 'zz' });
  // 3. then a frame that breaks the schema, and random bytes
  s.write(Buffer.concat([Buffer.from([0, 0, 0, 2]), Buffer.from([0x81, 0xa1])]));
  s.write(randomBytes(256));
  await sleep(1500);

  // The cluster is still one cluster with one leader and equal digests; the forged NodeGone never applied.
  await until(
    'healthy again',
    () =>
      nodes.every((n) => Object.keys(n.state.nodes).filter((id) => id !== 'evil').length === 2) &&
      new Set(nodes.map((n) => n.digest())).size === 1 &&
      nodes.filter((n) => n.role().role === 'leader').length === 1,
    8000,
  );
  t.ok(
    nodes.every((n) => n.state.nodes.a && n.state.nodes.b),
    'a and b still members',
  );
  t.ok(
    nodes.every((n) => !n.members().some((m) => m.nodeId === 'evil')),
    'the hostile connection was closed',
  );
  t.ok(
    nodes.every((n) => !n.state.nodes.evil || n.state.nodes.evil.incarnation === 1),
    `no forged state (digest was ${before.slice(0, 8)})`,
  );
  // The forged snapshot (index 99, a state that does not decode) is refused before the agreement core sees it:
  // no node's log jumps to its index (it did, with commit 99, when the core installed first and the shell refused).
  t.ok(
    nodes.every((n) => n.logIndex() < 99 && n.lastIndex() < 99),
    `no forged snapshot index: logs at ${nodes.map((n) => n.logIndex()).join(', ')}`,
  );
  // And the cluster still works.
  const r = await nodes[1]!.propose({ type: 'LinkUp', source: 'a', sink: 'b', ip: '127.0.0.1', linkType: 'ethernet' });
  t.ok(r);
  await until('link everywhere', () => nodes.every((n) => n.state.links.length === 1));
  s.destroy();
  g.destroy();
  big.destroy();
});
