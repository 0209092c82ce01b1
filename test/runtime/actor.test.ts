import t from 'tap';
import { Packr } from 'msgpackr';
import { TorusError } from '../../src/protocols/errors.js';
import { probeModule, sleep, testRuntime, waitFor } from './helpers.js';

t.test('an actor starts in its own worker, answers requests and applies events', async (t) => {
  const { runtime } = testRuntime(t);
  await runtime.supervise({ name: 'probe', module: probeModule, options: { start: 5 } });
  t.same(await runtime.request('probe', { type: 'snapshot' }), { value: 'running', count: 5 });
  runtime.send('probe', { type: 'inc', by: 2 });
  runtime.send('probe', { type: 'inc', by: 3 });
  t.same(
    await runtime.request('probe', { type: 'snapshot' }),
    { value: 'running', count: 10 },
    'events applied in order',
  );
  await waitFor(
    () => (runtime.snapshot('probe') as { count?: number } | undefined)?.count === 10,
    5_000,
    'pushed snapshot',
  );
  t.equal(await runtime.request('probe', { type: 'echo', payload: 'hi' }), 'hi');
  t.equal(runtime.liveWorkers(), 1);
});

t.test('large typed arrays cross the thread boundary by transfer, intact', async (t) => {
  const { runtime } = testRuntime(t);
  await runtime.supervise({ name: 'probe', module: probeModule });
  const values = new Float32Array(1 << 18).fill(1.5); // 1 MiB
  const reply = await runtime.request<{ total: number; kind: string; length: number }>('probe', {
    type: 'sum',
    values,
  });
  t.same(reply, { total: 1.5 * (1 << 18), kind: 'Float32Array', length: 1 << 18 });
  t.equal(values.byteLength, 0, "the sender's buffer was transferred, not copied");
});

t.test('requests time out with a clear error; unknown addresses and requests are named', async (t) => {
  const { runtime } = testRuntime(t);
  await runtime.supervise({ name: 'probe', module: probeModule });
  await t.rejects(runtime.request('probe', { type: 'slow', ms: 2_000 }, { timeoutMs: 100 }), {
    code: 'TORUS_ACTOR_TIMEOUT',
    message: /timed out after 100 ms/,
  });
  await t.rejects(runtime.request('nobody', { type: 'x' }), { code: 'TORUS_ACTOR_UNKNOWN' });
  await t.rejects(runtime.request('probe', { type: 'nope' }), {
    code: 'TORUS_PROTOCOL_INVALID',
    message: /no request "nope"/,
  });
  await t.rejects(runtime.request('other-node/probe', { type: 'x' }), {
    code: 'TORUS_ACTOR_UNKNOWN',
    message: /no route to node other-node/,
  });
});

t.test('actor → actor and actor → host service messages pass the relay', async (t) => {
  const { runtime } = testRuntime(t);
  const notes: unknown[] = [];
  runtime.register('collector', (body, from) => {
    notes.push({ body, from });
    return null;
  });
  await runtime.supervise({ name: 'probe', module: probeModule });
  await runtime.supervise({ name: 'probe2', module: probeModule, options: { start: 1 } });
  t.equal(
    await runtime.request('probe', { type: 'ask', to: 'probe2', payload: 42 }),
    42,
    'request routed between workers',
  );
  t.equal(await runtime.request('probe', { type: 'tellHost', text: 'hello' }), 'sent');
  await waitFor(() => notes.length === 1, 2_000, 'note');
  t.same(notes[0], { body: { type: 'note', text: 'hello' }, from: 'probe' });
  const fromPool = await runtime.request<{ input: unknown; threadId: number }>('probe', { type: 'pool' });
  t.same(fromPool.input, { hello: 'pool' }, 'the cpu pool ran the task');
  t.ok(fromPool.threadId > 0, 'in a pool thread');
});

t.test('malformed frames are rejected and the actor keeps serving', async (t) => {
  const { runtime } = testRuntime(t);
  await runtime.supervise({ name: 'probe', module: probeModule });
  const packr = new Packr({ useRecords: false });
  runtime.postRaw('probe', new Uint8Array([0xc1, 0xff, 0x00, 0x13])); // not msgpack
  runtime.postRaw('probe', 'a string, not bytes');
  runtime.postRaw('probe', new Uint8Array(packr.pack({ not: 'a batch' })));
  runtime.postRaw('probe', new Uint8Array(packr.pack([{ t: 'msg', from: 7, to: [], body: 'x' }, { t: 'warp' }])));
  runtime.send('probe', { type: 'inc', by: 'many' }); // valid frame, invalid event
  runtime.send('probe', { type: 'inc', by: 1 });
  t.same(await runtime.request('probe', { type: 'snapshot' }), { value: 'running', count: 1 });
  t.equal(runtime.stats().probe?.restarts, 0, 'no restart was needed');
});

t.test('unencodable bodies and results fail their sender with a clear error; the mailbox stays in step', async (t) => {
  const { runtime, unhandled } = testRuntime(t);
  await runtime.supervise({ name: 'probe', module: probeModule });
  await t.rejects(runtime.request('probe', { type: 'echo', payload: { nested: Symbol('x') } }), {
    code: 'TORUS_PROTOCOL_INVALID',
    message: /cannot encode msg frame/,
  });
  await t.rejects(runtime.request('probe', { type: 'unencodable' }), {
    code: 'TORUS_PROTOCOL_INVALID',
    message: /cannot encode reply frame/,
  });
  // New shapes both ways after the failures: the record definitions of both ends still agree.
  t.same(await runtime.request('probe', { type: 'echo', payload: { brand: 'new', shape: [1, { deep: true }] } }), {
    brand: 'new',
    shape: [1, { deep: true }],
  });
  runtime.send('probe', { type: 'inc', by: 2 });
  t.same(await runtime.request('probe', { type: 'snapshot' }), { value: 'running', count: 2 });
  t.same(unhandled, []);
});

t.test('unhandled rejections: none across the runtime tests', async (t) => {
  const { runtime, unhandled } = testRuntime(t);
  await runtime.supervise({ name: 'probe', module: probeModule });
  await t.rejects(runtime.request('probe', { type: 'slow', ms: 500 }, { timeoutMs: 50 }), TorusError);
  await sleep(600); // the late reply arrives after the timeout and is dropped quietly
  t.same(unhandled, []);
});

t.test('an actor answering at an alias: one worker, both addresses, one view, duplicates refused', async (t) => {
  const { runtime } = testRuntime(t);
  const notes: unknown[] = [];
  runtime.register('collector', (body) => {
    notes.push(body);
    return null;
  });
  await runtime.supervise({ name: 'probe', module: probeModule, options: { start: 1 }, aliases: ['also'] });
  t.same(runtime.actors(), ['probe', 'also'], 'both addresses listed');
  t.equal(runtime.liveWorkers(), 1, 'one thread');
  runtime.send('also', { type: 'inc', by: 2 });
  t.same(await runtime.request('probe', { type: 'snapshot' }), { value: 'running', count: 3 }, 'sent to the alias');
  t.equal(await runtime.request('also', { type: 'echo', payload: 'via alias' }), 'via alias');
  await waitFor(() => (runtime.snapshot('also') as { count?: number } | undefined)?.count === 3, 5_000, 'view');
  t.equal(runtime.snapshot('also'), runtime.snapshot('probe'), 'the alias shows the same view');
  t.equal(await runtime.request('also', { type: 'tellHost', text: 'from the worker' }), 'sent');
  await waitFor(() => notes.length === 1, 5_000, 'the note');
  t.equal(notes.length, 1, 'the worker still sends under its own name');
  t.same(Object.keys(runtime.stats()), ['probe'], 'stats per thread');
  t.throws(() => runtime.register('also', () => null), /already an actor/);
  await t.rejects(async () => runtime.supervise({ name: 'also', module: probeModule }), /already supervised/);
  await t.rejects(
    async () => runtime.supervise({ name: 'other', module: probeModule, aliases: ['probe'] }),
    /already supervised/,
  );
});
