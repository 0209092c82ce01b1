/**
 * Forged mDNS adverts: 3000 adverts with distinct node ids and ports, and 3000 whose packet source is
 * not an address they advertise, must not make the node dial thousands of times; a real advert still gets in.
 * Drives the advert handler ClusterNode uses with a real ConnectionManager (dials go to loopback only).
 */
import t from 'tap';
import { ConnectionManager } from '../../../../src/actors/cluster/transport/connections.js';
import { AdvertGate } from '../../../../src/actors/cluster/transport/advert-gate.js';
import { advertHandler } from '../../../../src/actors/cluster/transport/peer-discovery.js';
import { clusterNameHash } from '../../../../src/actors/cluster/transport/auth.js';
import { PROTOCOL_VERSION } from '../../../../src/protocols/peer-frames.js';
import { createLogger } from '../../../../src/runtime/log.js';

const KEY = 'c0de'.repeat(16);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function manager(nodeId: string, onDial?: () => void): ConnectionManager {
  const joined = new Set<string>();
  const m = new ConnectionManager({
    local: {
      nodeId,
      cluster: clusterNameHash('test'),
      incarnation: 1,
      startedAt: 0,
      apiPort: 0,
      name: nodeId,
      version: 'x',
      addresses: ['127.0.0.1'],
    },
    secret: KEY,
    host: '127.0.0.1',
    port: 0,
    log: createLogger({ test: 'advert-flood' }),
    now: Date.now,
    onJoined: (c) => joined.add(c.nodeId!),
    onLeft: () => undefined,
    onFrame: () => undefined,
    ...(onDial ? { onDial } : {}),
  });
  return m;
}

t.test('3000 forged adverts cause a bounded number of dials; a real advert afterwards still joins', async (t) => {
  let dials = 0;
  const a = manager('a', () => dials++);
  await a.listen();
  const real = manager('real');
  const realPort = await real.listen();
  t.teardown(async () => {
    await a.stop();
    await real.stop();
  });
  const cluster = clusterNameHash('test');
  const onAdvert = advertHandler(a, cluster, new AdvertGate());
  const ticker = setInterval(() => a.tick(), 100);
  t.teardown(() => clearInterval(ticker));
  // Ports 1..3000 on loopback: nothing listens there (a dial is refused at once, then retried with backoff).
  for (let i = 0; i < 3000; i++) {
    onAdvert({ nodeId: `forged-${i}`, cluster, port: 1 + i, v: PROTOCOL_VERSION, incarnation: 1 }, '127.0.0.1', [
      '127.0.0.1',
    ]);
    // Source spoofing: the advert names an address the packet did not come from. Never dialled.
    onAdvert(
      { nodeId: `spoof-${i}`, cluster, port: 40000 + (i % 1000), v: PROTOCOL_VERSION, incarnation: 1 },
      '127.0.0.1',
      ['10.77.250.250'],
    );
    if (i % 300 === 299) await sleep(100);
  }
  await sleep(6000);
  t.ok(dials <= 600, `${dials} dial attempts in ~7 s for 6000 adverts (bounded)`);
  t.ok(dials > 0, 'some adverts were dialled');
  await sleep(2500); // the bucket refills
  onAdvert({ nodeId: 'real', cluster, port: realPort, v: PROTOCOL_VERSION, incarnation: 1 }, '127.0.0.1', [
    '127.0.0.1',
  ]);
  const end = Date.now() + 10_000;
  while (!a.joined.has('real') && Date.now() < end) await sleep(50);
  t.ok(a.joined.has('real'), 'a real node advertised after the flood is dialled and joined');
});

t.test('AdvertGate: source must match, rate-limited with a burst', async (t) => {
  let now = 0;
  const g = new AdvertGate(() => now);
  t.equal(g.check('10.77.0.1', ['10.77.0.2']), 'source-mismatch');
  let accepted = 0;
  for (let i = 0; i < 1000; i++) if (g.check('10.77.0.1', ['10.77.0.1']) === 'accept') accepted++;
  t.equal(accepted, 40, 'the burst');
  now += 1000;
  accepted = 0;
  for (let i = 0; i < 1000; i++) if (g.check('10.77.0.1', ['10.77.0.1']) === 'accept') accepted++;
  t.equal(accepted, 20, 'then 20 a second');
  t.equal(g.dropped['rate-limited'], 1940);
});
