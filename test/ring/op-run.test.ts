/**
 * OpRun's failure rules, driven directly: a receive posted on a connection that has already ended fails the op at
 * once (unless the bytes came before the end), and every failure the op finds itself (a failed send, a silent
 * peer) goes to the communicator's fault hook, so the ring is torn down and the neighbours told, not only this op
 * rejected.
 */
import t from 'tap';
import { Socket } from 'node:net';
import { TorusError } from '../../src/protocols/errors.js';
import { OpRun, type OpRunHooks } from '../../src/ring/op-run.js';
import type { Conn } from '../../src/ring/peer-links.js';
import { StreamReader } from '../../src/ring/stream-reader.js';

function conn(peer: number, reader: StreamReader | null, socket = new Socket()): Conn {
  return { socket, reader, peer, side: 'left', index: 0 };
}

/** Hands `bytes` to the reader as one socket read would. */
function arrive(reader: StreamReader, bytes: Uint8Array): void {
  const { buffer, callback } = reader.onread();
  const into = buffer();
  into.set(bytes);
  callback(bytes.length, into);
}

function recorder(ended: Map<Conn, TorusError> = new Map()): {
  hooks: OpRunHooks;
  faults: { peer: number; error: TorusError }[];
} {
  const faults: { peer: number; error: TorusError }[] = [];
  return {
    faults,
    hooks: { fault: (c, error) => faults.push({ peer: c.peer, error }), ended: (c) => ended.get(c) },
  };
}

const lost = (peer: number) => new TorusError('TORUS_RING_PEER_LOST', `lost rank ${peer}`, { peer });

t.test('a receive posted on a connection that already ended faults at once, naming its peer', async (t) => {
  const left = conn(2, new StreamReader(() => undefined));
  const { hooks, faults } = recorder(new Map([[left, lost(2)]]));
  const run = new OpRun('rank 1 all-reduce', 60_000, (p) => `rank ${p}`, hooks);
  run.expect(left, new Uint8Array(8), () => undefined);
  t.equal(faults.length, 1, 'faulted when the receive was posted, not at the 60 s timeout');
  t.equal(faults[0]?.peer, 2);
  t.equal(faults[0]?.error.code, 'TORUS_RING_PEER_LOST');
  left.socket.destroy();
});

t.test('bytes that arrived before the end still satisfy a later receive', async (t) => {
  const reader = new StreamReader(() => undefined);
  const left = conn(2, reader);
  arrive(reader, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
  const { hooks, faults } = recorder(new Map([[left, lost(2)]]));
  const run = new OpRun('rank 1 all-reduce', 60_000, (p) => `rank ${p}`, hooks);
  const target = new Uint8Array(8);
  let done = false;
  run.expect(left, target, () => {
    done = true;
  });
  run.start();
  await run.promise;
  t.ok(done, 'the receive completed from what was read before the end');
  t.same([...target], [1, 2, 3, 4, 5, 6, 7, 8]);
  t.same(faults, [], 'no fault');
  left.socket.destroy();
});

t.test('only part of the bytes before the end: the rest never comes, so it faults', async (t) => {
  const reader = new StreamReader(() => undefined);
  const left = conn(3, reader);
  arrive(reader, new Uint8Array([1, 2, 3]));
  const { hooks, faults } = recorder(new Map([[left, lost(3)]]));
  const run = new OpRun('rank 0 all-gather', 60_000, (p) => `rank ${p}`, hooks);
  run.expect(left, new Uint8Array(8), () => undefined);
  t.equal(faults[0]?.peer, 3);
  left.socket.destroy();
});

t.test('a failed send goes to the fault hook (the ring breaks), naming the peer', async (t) => {
  const socket = new Socket();
  socket.destroy();
  const right = conn(1, null, socket);
  const { hooks, faults } = recorder();
  const run = new OpRun('rank 0 broadcast', 60_000, (p) => `rank ${p}`, hooks);
  run.send(right, new Uint8Array(16));
  await t.resolveMatch(new Promise((resolve) => setImmediate(() => resolve(faults))), [
    { peer: 1, error: { code: 'TORUS_RING_PEER_LOST' } },
  ]);
});

t.test('a silent peer goes to the fault hook as a timeout naming it', async (t) => {
  const left = conn(2, new StreamReader(() => undefined));
  const { hooks, faults } = recorder();
  const run = new OpRun('rank 1 all-reduce', 20, (p) => `rank ${p}`, hooks);
  run.expect(left, new Uint8Array(8), () => undefined);
  run.start();
  await new Promise((resolve) => setTimeout(resolve, 60));
  run.watch();
  t.equal(faults[0]?.peer, 2);
  t.equal(faults[0]?.error.code, 'TORUS_RING_TIMEOUT');
  t.match(faults[0]?.error.message ?? '', /no data from rank 2/);
  left.socket.destroy();
});
