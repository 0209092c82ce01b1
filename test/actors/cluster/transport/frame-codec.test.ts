/** The frame decoder survives any byte stream; the schema rejects unknown types and fields. */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { pack } from 'msgpackr';
import { cipherState, encodeFrame, FrameDecoder } from '../../../../src/actors/cluster/transport/frame-codec.js';
import { decodePeerFrame, MAX_HANDSHAKE_BYTES, type PeerFrame } from '../../../../src/protocols/peer-frames.js';
import { frameKey, transcript } from '../../../../src/actors/cluster/transport/auth.js';
import { ValidationError } from '../../../../src/protocols/errors.js';

// Deterministic PRNG (mulberry32) so a failure can be replayed from its seed.
function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const samples: PeerFrame[] = [
  {
    type: 'heartbeat',
    term: 3,
    role: 'leader',
    leader: 'a',
    lastIndex: 10,
    lastTerm: 3,
    lastHash: 'abc',
    commit: 0,
    commitHash: '0',
  },
  { type: 'vote-request', term: 4, lastIndex: 10, lastTerm: 3 },
  { type: 'vote', term: 4, granted: true, leader: null, lastIndex: 9, lastTerm: 3 },
  {
    type: 'append',
    term: 4,
    entries: [{ index: 11, term: 4, event: { type: 'NodeGone', nodeId: 'b', reason: 'x' }, at: 5 }],
    commit: 0,
    commitHash: '0',
  },
  { type: 'gap-request', from: 2, to: 9, prevHash: '0' },
  { type: 'snapshot-request' },
  { type: 'snapshot', term: 4, index: 10, lastTerm: 3, lastHash: 'f', digest: 'd', state: { any: ['thing'] } },
  { type: 'forward', id: 7, kind: 'command', body: { type: 'PlaceInstance' } },
  { type: 'forward-reply', id: 7, ok: false, error: { code: 'TORUS_NO_LEADER', message: 'm', details: {} } },
  { type: 'peers', peers: [{ nodeId: 'b', host: '10.77.0.2', port: 7000 }] },
];

function established(): FrameDecoder {
  const d = new FrameDecoder({ maxFrameBytes: 64 * 1024 });
  d.established(null);
  return d;
}

t.test('round trip of every frame type, split at every byte boundary', async (t) => {
  const bytes = Buffer.concat(samples.map((f) => encodeFrame(f)));
  for (let cut = 0; cut < bytes.length; cut += 7) {
    const d = established();
    const a = d.push(bytes.subarray(0, cut));
    const b = d.push(bytes.subarray(cut));
    t.equal(a.error ?? b.error, undefined);
    if (cut === 0) t.same([...a.frames, ...b.frames], samples);
    else t.equal(a.frames.length + b.frames.length, samples.length);
  }
});

t.test('strict schema: unknown type, unknown field, bad ranges', async (t) => {
  t.throws(() => decodePeerFrame({ type: 'nope' }), ValidationError);
  t.throws(() => decodePeerFrame({ type: 'snapshot-request', extra: 1 }), /unknown field/);
  t.throws(() => decodePeerFrame({ type: 'gap-request', from: 1, to: 100000, prevHash: '0' }), /from <= to/);
  t.throws(
    () =>
      decodePeerFrame({
        type: 'append',
        term: 2,
        entries: [{ index: 1, term: 3, event: { type: 'X' } }],
        commit: 0,
        commitHash: '0',
      }),
    /term/,
  );
  t.throws(
    () =>
      decodePeerFrame({
        type: 'append',
        term: 2,
        entries: [{ index: 0, term: 1, event: { type: 'X' } }],
        commit: 0,
        commitHash: '0',
      }),
    /index/,
  );
  t.throws(() =>
    decodePeerFrame({
      type: 'heartbeat',
      term: -1,
      role: 'leader',
      leader: null,
      lastIndex: 0,
      lastTerm: 0,
      lastHash: '0',
      commit: 0,
      commitHash: '0',
    }),
  );
  t.throws(() => decodePeerFrame(JSON.parse('{"type":"snapshot-request","__proto__":{"x":1}}')), /unknown field/);
});

t.test('oversized, empty, pre-handshake and garbage frames close with a reason', async (t) => {
  const big = Buffer.alloc(4);
  big.writeUInt32BE(MAX_HANDSHAKE_BYTES + 1);
  t.match(new FrameDecoder().push(big).error, /exceeds the limit/);
  t.match(new FrameDecoder().push(Buffer.alloc(4)).error, /empty frame/);
  t.match(new FrameDecoder().push(encodeFrame({ type: 'snapshot-request' })).error, /before the handshake/);
  const d = established();
  const huge = Buffer.alloc(4);
  huge.writeUInt32BE(0xffffffff);
  t.match(d.push(huge).error, /exceeds/);
  t.match(d.push(encodeFrame(samples[0]!)).error, /exceeds/, 'a failed decoder stays failed');
  const garbage = Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from([0xc1, 0xc1, 0xc1])]);
  t.match(established().push(garbage).error, /malformed msgpack|expected an object/);
  const notObject = Buffer.from(pack([1, 2, 3]));
  const framed = Buffer.concat([Buffer.from([0, 0, 0, notObject.length]), notObject]);
  t.match(established().push(framed).error, /expected an object/);
});

const hello = (nodeId: string, nonce: string) => ({
  type: 'hello' as const,
  v: 3,
  nodeId,
  cluster: 'c',
  incarnation: 1,
  startedAt: 0,
  port: 1,
  apiPort: 0,
  nonce,
  auth: true,
  name: nodeId,
  version: 'x',
  addresses: ['127.0.0.1'],
});
const th = transcript(hello('a', 'a'.repeat(32)), hello('b', 'b'.repeat(32)));

t.test(
  'AEAD: sealed frames are unreadable; tampered, replayed, reordered, reflected or plaintext frames are refused',
  async (t) => {
    const key = frameKey('secret', th, 'dialer-to-listener');
    const mk = () => {
      const d = new FrameDecoder();
      d.established(cipherState(key));
      return d;
    };
    const out = cipherState(key);
    const secretEvent: PeerFrame = {
      type: 'append',
      term: 4,
      entries: [{ index: 11, term: 4, event: { type: 'InstanceCreated', command: 'sh -c secret-payload-xyzzy' } }],
      commit: 0,
      commitHash: '0',
    };
    const f1 = encodeFrame(secretEvent, out);
    const f2 = encodeFrame(samples[1]!, out);
    t.notOk(f1.includes('secret-payload-xyzzy'), 'the body of a sealed frame is not in the bytes');
    t.ok(encodeFrame(secretEvent).includes('secret-payload-xyzzy'), '(it is in a plaintext frame)');
    t.same(mk().push(Buffer.concat([f1, f2])).frames, [secretEvent, samples[1]]);
    t.match(mk().push(Buffer.concat([f1, f1])).error, /failed to decrypt/, 'replay');
    t.match(mk().push(f2).error, /failed to decrypt/, 'reordered (or one dropped)');
    for (const at of [3, 4, 10, f1.length - 1]) {
      const tampered = Buffer.from(f1);
      tampered[at]! ^= 1;
      // A flipped length bit may first make the decoder wait for more bytes; the next frame's bytes then fail too.
      const got = mk().push(Buffer.concat([tampered, f2]));
      t.ok(got.error && got.frames.length === 0, `a flipped bit at ${at} is refused, nothing delivered`);
    }
    t.match(mk().push(encodeFrame(samples[0]!)).error, /failed to decrypt/, 'plaintext frame');
    const other = cipherState(frameKey('secret', th, 'listener-to-dialer'));
    t.match(
      mk().push(encodeFrame(samples[0]!, other)).error,
      /failed to decrypt/,
      'reflected from the other direction',
    );
    const wrong = cipherState(frameKey('other secret', th, 'dialer-to-listener'));
    t.match(mk().push(encodeFrame(samples[0]!, wrong)).error, /failed to decrypt/, 'another key');
  },
);

t.test('many small chunks: a large sealed frame split into 1..977-byte pieces decodes exactly', async (t) => {
  const key = frameKey('secret', th, 'dialer-to-listener');
  const out = cipherState(key);
  const big: PeerFrame = {
    type: 'snapshot',
    term: 1,
    index: 1,
    lastTerm: 1,
    lastHash: 'h',
    digest: 'd',
    state: { blob: randomBytes(3 << 20).toString('base64') },
  };
  const stream = Buffer.concat([encodeFrame(samples[0]!, out), encodeFrame(big, out), encodeFrame(samples[2]!, out)]);
  const d = new FrameDecoder();
  d.established(cipherState(key));
  const got: PeerFrame[] = [];
  const r = rng(7);
  let pushes = 0;
  const errors: string[] = [];
  for (let at = 0; at < stream.length; pushes++) {
    const n = 1 + Math.floor(r() * 977);
    const res = d.push(stream.subarray(at, at + n));
    if (res.error) errors.push(res.error);
    got.push(...res.frames);
    at += n;
  }
  t.same(errors, [], 'no errors');
  t.ok(pushes > 5000, `${pushes} pushes`);
  t.same(got, [samples[0], big, samples[2]], 'every frame, whole and in order');
});

t.test('fuzz: random and mutated streams never throw past the decoder', async (t) => {
  const valid = Buffer.concat(samples.map((f) => encodeFrame(f)));
  let errors = 0;
  let frames = 0;
  for (let seed = 1; seed <= 3000; seed++) {
    const r = rng(seed);
    let input: Buffer;
    if (seed % 3 === 0) input = randomBytes(Math.floor(r() * 512));
    else {
      input = Buffer.from(valid);
      const flips = 1 + Math.floor(r() * 8);
      for (let i = 0; i < flips; i++) input[Math.floor(r() * input.length)] = Math.floor(r() * 256);
      if (seed % 5 === 0) input = input.subarray(0, Math.floor(r() * input.length));
    }
    const d = seed % 2 ? established() : new FrameDecoder();
    try {
      for (let at = 0; at < input.length; ) {
        const n = 1 + Math.floor(r() * 64);
        const res = d.push(input.subarray(at, at + n));
        frames += res.frames.length;
        for (const f of res.frames) decodePeerFrame(JSON.parse(JSON.stringify(f)) as unknown); // frames out are valid
        if (res.error) {
          errors++;
          break;
        }
        at += n;
      }
    } catch (err) {
      t.fail(`seed ${seed} threw ${(err as Error).message}`);
      return;
    }
  }
  t.ok(errors > 1000, `${errors} streams rejected with a reason, ${frames} valid frames passed`);
});
