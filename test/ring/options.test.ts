/** Connect options: validation, "ip:port" hosts, ring ids that do not match are refused. */
import t from 'tap';
import { ValidationError } from '../../src/protocols/errors.js';
import { RingCommunicator } from '../../src/ring/index.js';
import { resolveOptions } from '../../src/ring/options.js';
import { freePorts } from './fixtures/helpers.js';
import { tcpHandles, tcpHandlesSettled } from './fixtures/reference.js';

t.test('options are validated and defaulted', async (t) => {
  const o = resolveOptions({ rank: 1, hosts: ['10.0.0.1:5000', '0.0.0.0:5001', { ip: '10.0.0.3', port: 5002 }] });
  t.same(o.hosts, [
    { ip: '10.0.0.1', port: 5000 },
    { ip: '0.0.0.0', port: 5001 },
    { ip: '10.0.0.3', port: 5002 },
  ]);
  t.match(o, {
    timeoutMs: 30_000,
    connections: 1,
    directions: 'auto',
    bidirectional: false,
    chunkBytes: 262_144,
    maxChunkBytes: 2_097_152,
    smallMessageBytes: 32_768,
    kernel: 'wasm',
  });
  for (const bad of [
    { rank: 3, hosts: ['a:1', 'b:2'] },
    { rank: -1, hosts: ['a:1'] },
    { rank: 0, hosts: [] },
    { rank: 0, hosts: ['nope'] },
    { rank: 0, hosts: ['a:70000'] },
    { rank: 0, hosts: ['a:1'], connections: 0 },
    { rank: 0, hosts: ['a:1'], connections: 1.5 },
    { rank: 0, hosts: ['a:1'], timeoutMs: 0 },
  ])
    t.throws(() => resolveOptions(bad as never), ValidationError, JSON.stringify(bad));
});

t.test('"ip:port" hosts work end to end', async (t) => {
  const ports = await freePorts(2);
  const hosts = (rank: number) => ports.map((p, r) => (r === rank ? `0.0.0.0:${p}` : `127.0.0.${r + 1}:${p}`));
  const comms = await Promise.all(
    [0, 1].map((rank) => RingCommunicator.connect({ rank, hosts: hosts(rank), connectTimeoutMs: 5000 })),
  );
  t.teardown(() => Promise.all(comms.map((c) => c.close())));
  const bufs = [Int32Array.from([1, 2]), Int32Array.from([10, 20])];
  await Promise.all(comms.map((c, r) => c.allReduce(bufs[r] as Int32Array)));
  t.same(
    bufs.map((b) => Array.from(b)),
    [
      [11, 22],
      [11, 22],
    ],
  );
});

t.test('a neighbour of another ring (different ringId) is refused; set-up times out naming it', async (t) => {
  const before = tcpHandles();
  const ports = await freePorts(2);
  const hosts = (rank: number) => ports.map((p, r) => ({ ip: r === rank ? '0.0.0.0' : `127.0.0.${r + 1}`, port: p }));
  const results = await Promise.allSettled(
    [0, 1].map((rank) =>
      RingCommunicator.connect({ rank, hosts: hosts(rank), ringId: rank + 1, connectTimeoutMs: 1000 }),
    ),
  );
  for (const r of results) {
    t.equal(r.status, 'rejected');
    if (r.status === 'rejected')
      t.match(r.reason, {
        code: /TORUS_RING_TIMEOUT|TORUS_PROTOCOL_INVALID/,
        message: /rank [01] \(127\.0\.0\.[12]:\d+\)/,
      });
  }
  t.equal(await tcpHandlesSettled(before), before, 'no sockets left');
});
