/**
 * Ring sockets prove the data key when they open: a keyed ring forms and computes; a stranger that
 * connects to a rank's port (and even sends a perfectly valid hello frame) is refused and does not stop the real
 * neighbour; a rank with another key cannot join.
 */
import t from 'tap';
import net from 'node:net';
import { RingCommunicator } from '../../src/ring/index.js';
import { encodeRingFrame } from '../../src/protocols/ring-frames.js';
import { freePorts, loopbackHosts, loopbackRing } from './fixtures/helpers.js';

const KEY = 'e1e1'.repeat(16);

t.test('a keyed ring forms and all-reduces', async (t) => {
  const comms = await loopbackRing(3, { key: KEY });
  t.teardown(() => comms.forEach((c) => c.close()));
  const outs = await Promise.all(comms.map((c) => c.allReduce(Float32Array.from([c.rank + 1, 10]), 'sum')));
  t.ok(
    outs.every((o) => o[0] === 6 && o[1] === 30),
    'sum over 3 ranks',
  );
});

t.test('a stranger on the ring port is refused; the real neighbour still connects', async (t) => {
  const ports = await freePorts(2);
  const rank0 = RingCommunicator.connect({ rank: 0, hosts: loopbackHosts(ports, 0), key: KEY, connectTimeoutMs: 8000 });
  // The stranger knows the protocol (a valid hello of rank 1, ring 0) but not the key. It retries while rank 0 is
  // not listening yet (bounded), so a slow start cannot read as a refusal.
  const strangerTry = () =>
    new Promise<{ closed: boolean; got: number; notListening: boolean }>((resolve) => {
      const s = net.connect(ports[0]!, '127.0.0.1', () =>
        s.write(encodeRingFrame({ kind: 'hello', role: 'left', ringId: 0, rank: 1, worldSize: 2, connection: 0 })),
      );
      let got = 0;
      let notListening = false;
      s.on('data', (d: Buffer) => {
        got += d.length;
      });
      s.on('error', (e: NodeJS.ErrnoException) => {
        notListening = e.code === 'ECONNREFUSED';
      });
      s.on('close', () => {
        clearTimeout(timer);
        resolve({ closed: true, got, notListening });
      });
      const timer = setTimeout(() => {
        s.destroy();
        resolve({ closed: false, got, notListening });
      }, 10_000);
    });
  let refused = await strangerTry();
  for (let i = 0; i < 100 && refused.notListening; i++) {
    await new Promise((r) => setTimeout(r, 50));
    refused = await strangerTry();
  }
  t.ok(refused.closed, 'the stranger was disconnected');
  t.equal(refused.got, 16, 'it got only the challenge, never an ack');
  const rank1 = RingCommunicator.connect({ rank: 1, hosts: loopbackHosts(ports, 1), key: KEY, connectTimeoutMs: 8000 });
  const comms = await Promise.all([rank0, rank1]);
  t.teardown(() => comms.forEach((c) => c.close()));
  const outs = await Promise.all(comms.map((c) => c.allReduce(Int32Array.from([c.rank + 1]), 'sum')));
  t.same(
    outs.map((o) => o[0]),
    [3, 3],
    'the ring works',
  );
});

t.test('a rank with another key is refused', async (t) => {
  const ports = await freePorts(2);
  const results = await Promise.allSettled([
    RingCommunicator.connect({ rank: 0, hosts: loopbackHosts(ports, 0), key: KEY, connectTimeoutMs: 2500 }),
    RingCommunicator.connect({
      rank: 1,
      hosts: loopbackHosts(ports, 1),
      key: 'f0f0'.repeat(16),
      connectTimeoutMs: 2500,
    }),
  ]);
  for (const r of results) if (r.status === 'fulfilled') r.value.close();
  t.ok(
    results.every((r) => r.status === 'rejected'),
    'neither rank formed a ring',
  );
  t.match(
    results.map((r) => (r.status === 'rejected' ? String((r.reason as Error).message) : 'ok')).join(' | '),
    /did not prove the cluster key|timed out|could not connect/,
  );
});
