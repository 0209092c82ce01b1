// The mailbox codec over a real MessageChannel: batching, sequential records, the sequence check, large posts,
// out-of-band typed arrays, and encode failures that must not desynchronise the two ends.
import t from 'tap';
import { MessageChannel } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import { ValidationError } from '../../src/protocols/errors.js';
import type { Frame } from '../../src/protocols/mailbox.js';
import { FramePort, type PostTarget } from '../../src/runtime/frame-port.js';
import type { Test } from 'tap';
import { waitFor } from './helpers.js';

function pair(t: Test): {
  a: FramePort;
  b: FramePort;
  received: Frame[];
  rejected: ValidationError[];
  raw: (v: unknown) => void;
  settle: (count: number) => Promise<void>;
} {
  const { port1, port2 } = new MessageChannel();
  const received: Frame[] = [];
  const rejected: ValidationError[] = [];
  const a = new FramePort(port1 as unknown as PostTarget, { onFrame: () => undefined, onReject: () => undefined }, 'a');
  const b = new FramePort(
    port2 as unknown as PostTarget,
    { onFrame: (f) => received.push(f), onReject: (e) => rejected.push(e) },
    'b',
  );
  t.teardown(() => {
    a.close();
    b.close();
    port1.close();
    port2.close();
  });
  /** Flushes and waits until `count` frames and rejections have arrived in all. */
  const settle = async (count: number): Promise<void> => {
    a.flush();
    await waitFor(() => received.length + rejected.length >= count, 5_000, `${count} frames`);
  };
  return { a, b, received, rejected, raw: (v) => port1.postMessage(v), settle };
}

const msg = (body: Record<string, unknown> & { type: string }, corr?: number): Frame =>
  ({ t: 'msg', from: 'host', to: 'x', body, ...(corr === undefined ? {} : { corr }) }) as Frame;

t.test('frames arrive in order, shapes change, batches split at 256 frames', async (t) => {
  const { a, received, rejected, settle } = pair(t);
  for (let i = 0; i < 1_000; i++) {
    // Many object shapes, each described once by the sequential records and reused after.
    a.send(
      msg(
        i % 3 === 0
          ? { type: 'tick', i }
          : i % 3 === 1
            ? { type: 'tock', i, tags: ['a', `k${i % 7}`], [`f${i % 50}`]: i }
            : { type: 'nested', i, deep: { x: i, y: { z: [i] } } },
      ),
    );
  }
  await settle(1_000);
  t.equal(rejected.length, 0);
  t.equal(received.length, 1_000);
  t.ok(
    received.every((f, i) => f.t === 'msg' && f.body.i === i),
    'in order',
  );
  const sample = received[997] as Extract<Frame, { t: 'msg' }>;
  t.same(sample.body, { type: 'tock', i: 997, tags: ['a', 'k3'], f47: 997 });
});

t.test('more distinct shapes than msgpackr keeps records for: ids are recycled with their definitions', async (t) => {
  const { a, received, rejected, settle } = pair(t);
  for (let i = 0; i < 600; i++) {
    a.send(msg({ type: 'dyn', [`node-${i}`]: { rtt: i } }));
    if (i % 50 === 0) a.send(msg({ type: 'dyn', 'node-0': { rtt: -i } })); // an early shape, reused late
  }
  await settle(612);
  t.same(rejected, []);
  const bad = received.filter((f, n) => {
    const body = (f as Extract<Frame, { t: 'msg' }>).body;
    return (
      Object.keys(body).length !== 2 ||
      body.type !== 'dyn' ||
      (n === 0 && (body['node-0'] as { rtt: number }).rtt !== 0)
    );
  });
  t.equal(bad.length, 0, 'every frame decoded to its own shape');
  t.same((received[received.length - 1] as Extract<Frame, { t: 'msg' }>).body, {
    type: 'dyn',
    'node-599': { rtt: 599 },
  });
});

t.test('small binaries in bodies are copies: a later post does not change an earlier frame', async (t) => {
  const { a, received, settle } = pair(t);
  a.send(msg({ type: 'bin', data: Buffer.from([1, 2, 3, 4]) }));
  await settle(1);
  for (let i = 0; i < 20; i++) a.send(msg({ type: 'bin', data: Buffer.from([9, 9, 9, 9]) })); // covers the first post's bytes
  await settle(21);
  t.same([...((received[0] as Extract<Frame, { t: 'msg' }>).body.data as Uint8Array)], [1, 2, 3, 4]);
  t.same([...((received[20] as Extract<Frame, { t: 'msg' }>).body.data as Uint8Array)], [9, 9, 9, 9]);
});

t.test('a large post is transferred, large typed arrays move out of band', async (t) => {
  const { a, received, settle } = pair(t);
  const text = 'x'.repeat(40_000); // above the small-post size: travels as a transferred buffer
  const values = new Float32Array(1 << 16).fill(1.5); // 256 KiB: out of band
  a.send(msg({ type: 'big', text }));
  a.send(msg({ type: 'arr', values }));
  a.flush();
  t.equal(values.length, 0, 'the typed array was transferred (detached here), not copied');
  await settle(2);
  t.equal((received[0] as Extract<Frame, { t: 'msg' }>).body.text, text);
  const got = (received[1] as Extract<Frame, { t: 'msg' }>).body.values as Float32Array;
  t.ok(got instanceof Float32Array);
  t.equal(got.length, 1 << 16);
  t.equal(got[12345], 1.5);
});

t.test('a burst of large frames leaves in several posts, each under the size limit', async (t) => {
  const { port1, port2 } = new MessageChannel();
  const received: Frame[] = [];
  const rejected: ValidationError[] = [];
  let posts = 0;
  port2.on('message', () => {
    posts++;
  });
  const a = new FramePort(port1 as unknown as PostTarget, { onFrame: () => undefined, onReject: () => undefined }, 'a');
  const b = new FramePort(
    port2 as unknown as PostTarget,
    { onFrame: (f) => received.push(f), onReject: (e) => rejected.push(e) },
    'b',
    3 * 1024 * 1024,
  );
  t.teardown(() => {
    a.close();
    b.close();
    port1.close();
    port2.close();
  });
  const text = 'z'.repeat(400_000);
  for (let i = 0; i < 20; i++) a.send(msg({ type: 'chunk', i, text })); // 8 MB in one tick
  a.flush();
  await waitFor(() => received.length + rejected.length >= 20, 5_000, 'all chunks');
  t.same(rejected, []);
  t.same(
    received.map((f) => (f as Extract<Frame, { t: 'msg' }>).body.i),
    [...Array(20).keys()],
  );
  t.ok(posts >= 7, `split into ${posts} posts`);
});

t.test('an unencodable frame fails its sender and does not desynchronise the records', async (t) => {
  const { a, received, rejected, settle } = pair(t);
  a.send(msg({ type: 'before', x: 1 }));
  t.throws(() => a.send(msg({ type: 'bad', shape: { never: 'seen', s: Symbol('no') } })), ValidationError);
  // New shapes after the failure must still decode: the sender started a fresh set of record definitions.
  a.send(msg({ type: 'after', shape: { never: 'seen' } }));
  a.send(msg({ type: 'before', x: 2 }));
  await settle(3);
  t.same(rejected, []);
  t.same(
    received.map((f) => (f as Extract<Frame, { t: 'msg' }>).body),
    [
      { type: 'before', x: 1 },
      { type: 'after', shape: { never: 'seen' } },
      { type: 'before', x: 2 },
    ],
  );
});

t.test('foreign, replayed or garbage posts are rejected and the stream goes on', async (t) => {
  const { a, received, rejected, raw, settle } = pair(t);
  a.send(msg({ type: 'one' }));
  await settle(1);
  const packr = new Packr({ useRecords: false });
  raw(new Uint8Array([0xc1, 0xff, 0x00, 0x13])); // garbage
  raw(`\u0001\u0000\u0000\u0000${packr.pack([{ t: 'msg' }]).toString('latin1')}`); // a replay of post 1
  raw(new Uint8Array(packr.pack([{ t: 'msg', from: 'host', to: 'x', body: { type: 'sneaky' } }]))); // no header
  raw({ not: 'bytes' });
  raw('');
  a.send(msg({ type: 'two' }));
  await settle(7);
  t.equal(rejected.length, 5, 'every foreign post rejected');
  t.match(rejected[1]?.message, /out of sequence/);
  t.same(
    received.map((f) => (f as Extract<Frame, { t: 'msg' }>).body.type),
    ['one', 'two'],
  );
});

t.test('a post over the size limit is rejected', async (t) => {
  const { port1, port2 } = new MessageChannel();
  const rejected: ValidationError[] = [];
  const a = new FramePort(port1 as unknown as PostTarget, { onFrame: () => undefined, onReject: () => undefined }, 'a');
  const b = new FramePort(
    port2 as unknown as PostTarget,
    { onFrame: () => t.fail('no frame expected'), onReject: (e) => rejected.push(e) },
    'b',
    1_000,
  );
  t.teardown(() => {
    a.close();
    b.close();
    port1.close();
    port2.close();
  });
  a.send(msg({ type: 'big', text: 'y'.repeat(5_000) }));
  a.flush();
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(rejected.length, 1);
  t.match(rejected[0]?.message, /exceeds the 1000-byte limit/);
});

t.test('send after close throws ClosedResourceError', async (t) => {
  const { a } = pair(t);
  a.close();
  t.throws(() => a.send(msg({ type: 'late' })), { code: 'TORUS_CHANNEL_CLOSED' });
});
