/**
 * Attacks on the cluster port, real sockets on loopback, ClusterNodes in this process: sniffing,
 * replaying and altering frames, forged hellos, missing or wrong credentials, and a flood of idle handshakes.
 */
import t from 'tap';
import { connect, createServer, type Socket } from 'node:net';
import { ClusterNode } from '../../../src/actors/cluster/cluster-node.js';
import { topologyReplica } from '../../../src/actors/cluster/topology-state.js';
import type { ClusterState } from '../../../src/actors/topology-keeper/state.js';
import { rawPeer } from './fixtures/raw-peer.js';
import { sleep, until } from './fixtures/until.js';
import { within } from '../../fixtures/within.js';

const timings = {
  heartbeatMs: 100,
  failureTimeoutMs: 1500,
  settleMs: 300,
  electionStaggerMs: 100,
  candidateTimeoutMs: 500,
  gapRetryMs: 200,
};
const KEY = 'a3f1'.repeat(16);

type Extra = Partial<ConstructorParameters<typeof ClusterNode<ClusterState>>[0]>;
function makeNode(
  t: { teardown(fn: () => unknown): void },
  id: string,
  peers: string[],
  extra: Extra = {},
): ClusterNode<ClusterState> {
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
    ...extra,
  });
  t.teardown(() => node.stop());
  return node;
}

const memberCount = (n: ClusterNode<ClusterState>) => Object.keys(n.state.nodes).length;
const linkedAB = (n: ClusterNode<ClusterState>) => n.state.links.some((l) => l.source === 'a' && l.sink === 'b');

/** A TCP relay that records what crosses it; `replay` re-sends the first chunk b→a once more after `replayAfter` chunks. */
async function relay(
  t: { teardown(fn: () => unknown): void },
  to: number,
): Promise<{ port: number; toA: Buffer[]; toB: Buffer[]; inject(bytes: Buffer): void }> {
  const toA: Buffer[] = [];
  const toB: Buffer[] = [];
  let upstream: Socket | null = null;
  const server = createServer((down) => {
    const up = connect(to, '127.0.0.1');
    upstream = up;
    down.on('data', (c: Buffer) => {
      toA.push(Buffer.from(c));
      up.write(c);
    });
    up.on('data', (c: Buffer) => {
      toB.push(Buffer.from(c));
      down.write(c);
    });
    const end = () => {
      down.destroy();
      up.destroy();
    };
    down.on('close', end);
    up.on('close', end);
    down.on('error', end);
    up.on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        (upstream as Socket | null)?.destroy();
      }),
  );
  return { port: (server.address() as { port: number }).port, toA, toB, inject: (bytes) => upstream?.write(bytes) };
}

t.test('sniffed frames are unreadable; a replayed frame is refused and the connection closed', async (t) => {
  const a = makeNode(t, 'a', []);
  const pa = await a.start();
  const wire = await relay(t, pa);
  const b = makeNode(t, 'b', [`127.0.0.1:${wire.port}`]);
  await b.start();
  await until('formed', () => memberCount(a) === 2 && memberCount(b) === 2 && a.role().leader !== null);
  const marker = 'eth-xyzzy-sniff-marker';
  await b.propose({
    type: 'NodeProfileUpdated',
    nodeId: 'b',
    interfaces: [{ name: marker, ips: ['127.0.0.1'], type: 'ethernet' }],
    memory: { ramTotal: 2, ramAvailable: 1, swapTotal: 0, swapAvailable: 0 },
  });
  await until('profile applied on both', () => [a, b].every((n) => n.state.nodes.b?.profile !== undefined));
  const bytes = Buffer.concat([...wire.toA, ...wire.toB]);
  t.ok(bytes.length > 1000, `${bytes.length} bytes crossed the wire`);
  t.notOk(bytes.includes(marker), 'the proposed event is not readable on the wire');
  t.notOk(
    bytes.includes('NodeProfileUpdated') || bytes.includes('heartbeat'),
    'no frame type is readable after the handshake',
  );
  t.ok(bytes.includes('hello'), '(the hello is plaintext, and carries nothing secret)');

  // Replay: b→a bytes seen on the wire, sent again into the same connection.
  const left = new Promise<string>((resolve) => a.once('left', (e: { reason: string }) => resolve(e.reason)));
  const lastChunk = wire.toA.at(-1)!;
  wire.inject(lastChunk);
  const reason = await within(left, 5000, 'still connected');
  t.match(reason, /decrypt/, `the replayed frame closed the connection: ${reason}`);
  await until('b joins again (a new connection, new keys)', () => a.members().some((m) => m.nodeId === 'b'), 15_000);
  t.equal(memberCount(a), 2, 'membership unchanged');
});

t.test('20 forged hellos with the right cluster hash add no member (keyed node)', async (t) => {
  const a = makeNode(t, 'a', []);
  const pa = await a.start();
  const b = makeNode(t, 'b', [`127.0.0.1:${pa}`]);
  await b.start();
  await until('formed', () => memberCount(a) === 2 && a.role().leader !== null);
  const forged = await Promise.all(
    Array.from({ length: 20 }, (_, i) => rawPeer(pa, `forged-${i}`, { key: 'not the key', complete: true })),
  );
  const blind = await Promise.all(
    Array.from({ length: 20 }, (_, i) => rawPeer(pa, `blind-${i}`, { key: KEY, complete: false })),
  );
  t.teardown(() => [...forged, ...blind].forEach((p) => p.socket.destroy()));
  await sleep(3500);
  t.equal(memberCount(a), 2, 'the state still lists 2 members');
  t.same(
    a.members().map((m) => m.nodeId),
    ['b'],
    'only b is joined',
  );
  t.equal(a.role().quorum.members, 2, 'the quorum is counted against 2 members');
  t.ok(
    forged.every((p) => p.closed()),
    'the wrong proofs were refused',
  );
  t.ok(
    a.heard().some((h) => h.reason === 'auth-failure' && h.nodeId?.startsWith('forged-')),
    'and listed as auth-failure',
  );
  await b.propose({ type: 'LinkUp', source: 'a', sink: 'b', ip: '127.0.0.1', linkType: 'ethernet' });
  await until('the write applied on both', () => [a, b].every(linkedAB));
  t.pass('writes still work: the LinkUp proposed through b is in both states');
});

t.test('open mode: 20 blind forged hellos (no answer to our hello) add no member', async (t) => {
  const a = makeNode(t, 'a', [], { secret: null });
  const pa = await a.start();
  const b = makeNode(t, 'b', [`127.0.0.1:${pa}`], { secret: null });
  await b.start();
  await until('formed', () => memberCount(a) === 2 && a.role().leader !== null);
  const blind = await Promise.all(
    Array.from({ length: 20 }, (_, i) => rawPeer(pa, `blind-${i}`, { key: null, complete: false })),
  );
  t.teardown(() => blind.forEach((p) => p.socket.destroy()));
  await sleep(1500);
  t.equal(memberCount(a), 2, 'the state still lists 2 members');
  t.equal(a.members().length, 1, 'only b is joined');
  await sleep(2000);
  t.ok(
    blind.every((p) => p.closed()),
    'the half-open handshakes were closed at their deadline',
  );
  await b.propose({ type: 'LinkUp', source: 'a', sink: 'b', ip: '127.0.0.1', linkType: 'ethernet' });
  await until('the write applied on both', () => [a, b].every(linkedAB));
  t.pass('writes still work: the LinkUp proposed through b is in both states');
});

t.test(
  'no credential, or the wrong one: never a member, listed as auth-required / auth-failure, quorum unchanged',
  async (t) => {
    const a = makeNode(t, 'a', []);
    const pa = await a.start();
    const b = makeNode(t, 'b', [`127.0.0.1:${pa}`]);
    await b.start();
    await until('formed', () => memberCount(a) === 2 && a.role().leader !== null);
    const open = makeNode(t, 'open', [`127.0.0.1:${pa}`], { secret: null, redial: { baseMs: 300, capMs: 1000 } });
    await open.start();
    const wrong = makeNode(t, 'wrong', [`127.0.0.1:${pa}`], {
      secret: 'b7'.repeat(32),
      redial: { baseMs: 300, capMs: 1000 },
    });
    await wrong.start();
    await until('the open node listed on a as auth-required', () =>
      a.heard().some((h) => h.nodeId === 'open' && h.reason === 'auth-required'),
    );
    await until('a listed on the open node as auth-required', () =>
      open.heard().some((h) => h.nodeId === 'a' && h.reason === 'auth-required'),
    );
    await until('the wrong key listed on a as auth-failure', () =>
      a.heard().some((h) => h.nodeId === 'wrong' && h.reason === 'auth-failure'),
    );
    await until('a listed on the wrong node as auth-failure', () =>
      wrong.heard().some((h) => h.nodeId === 'a' && h.reason === 'auth-failure'),
    );
    await sleep(1000);
    t.same(Object.keys(a.state.nodes).sort(), ['a', 'b'], 'the state lists a and b only');
    t.equal(a.role().quorum.members, 2);
    t.same(open.members(), [], 'the open node joined nobody');
    t.same(wrong.members(), [], 'the wrong-key node joined nobody');
  },
);

t.test('300 idle connections to the cluster port: a restarted member still rejoins within 5 s', async (t) => {
  const a = makeNode(t, 'a', []);
  const pa = await a.start();
  const mkB = () => makeNode(t, 'b', [`127.0.0.1:${pa}`], { incarnation: 2 });
  const b1 = makeNode(t, 'b', [`127.0.0.1:${pa}`]);
  await b1.start();
  await until('formed', () => memberCount(a) === 2 && a.role().leader !== null);
  await b1.stop();
  // The attacker (another address: 127.0.0.2) keeps 300 idle sockets open, re-opening each one the node closes.
  let stop = false;
  let opened = 0;
  const sockets = new Set<Socket>();
  const open = (): void => {
    if (stop || opened > 5000) return;
    opened++;
    const s = connect({ port: pa, host: '127.0.0.1', localAddress: '127.0.0.2' });
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => {
      sockets.delete(s);
      setTimeout(open, 20);
    });
  };
  for (let i = 0; i < 300; i++) open();
  t.teardown(() => {
    stop = true;
    for (const s of sockets) s.destroy();
  });
  await sleep(1000);
  const b2 = mkB();
  const t0 = Date.now();
  await b2.start();
  await until('b rejoined', () => a.members().some((m) => m.nodeId === 'b' && m.incarnation === 2), 5000);
  t.pass(`b rejoined in ${Date.now() - t0} ms while ${sockets.size} attacker sockets were open (${opened} opened)`);
  stop = true;
});
