// The keeper in a real worker thread under the runtime: messages, requests, pushed view, reports, catch-up.
import t from 'tap';
import { Runtime } from '../../../src/runtime/runtime.js';
import { siblingModule } from '../../../src/runtime/module-url.js';
import { applyEvents } from '../../../src/actors/topology-keeper/apply.js';
import { stateDigest } from '../../../src/actors/topology-keeper/digest.js';
import { emptyState } from '../../../src/actors/topology-keeper/state.js';
import type { KeeperView } from '../../../src/actors/topology-keeper/queries.js';
import { everyEvent, indexed, joined } from '../../fixtures/topology/events.js';

const keeperModule = siblingModule(import.meta.url, '../../../src/actors/topology-keeper/worker');
const log = indexed(everyEvent.slice(0, 15));

async function waitFor(what: string, predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('keeper worker: ordered apply, queries, reports, catch-up of a second replica', async (t) => {
  const runtime = new Runtime();
  t.teardown(() => runtime.kill());
  const reports: unknown[] = [];
  const feed: number[] = [];
  runtime.register('collector', (body) => {
    reports.push(body);
    return null;
  });
  runtime.register('node-events', (body) => {
    feed.push(...(body.entries as { index: number }[]).map((e) => e.index));
    return null;
  });
  await runtime.supervise({ name: 'topology-keeper', module: keeperModule, options: { reportTo: 'collector' } });

  runtime.send('topology-keeper', { type: 'events', entries: log.slice(5) });
  runtime.send('topology-keeper', { type: 'events', entries: log.slice(2, 5) });
  await waitFor('gap report', () => reports.length >= 1);
  t.same(reports[0], { type: 'topology.gap', from: 1, to: 5 });
  runtime.send('topology-keeper', { type: 'event', indexed: log[1] });
  runtime.send('topology-keeper', { type: 'event', indexed: log[0] });
  runtime.send('topology-keeper', { type: 'event', indexed: log[0] }); // harmless re-send
  runtime.send('topology-keeper', { type: 'event', indexed: { ...log[0], event: joined('zz') } }); // conflicting
  runtime.send('topology-keeper', { type: 'event', indexed: { index: 'x' } }); // garbage: rejected by the decoder, keeper keeps going

  const expected = stateDigest(applyEvents(emptyState, log));
  await waitFor(
    'view at index 15',
    () => (runtime.snapshot('topology-keeper') as KeeperView | undefined)?.lastIndex === 15,
  );
  const answer = await runtime.request<{ digest: string; lastIndex: number; state: unknown }>('topology-keeper', {
    type: 'state',
  });
  t.equal(answer.digest, expected, 'same digest as the pure fold');
  t.equal(stateDigest(answer.state as never), expected, 'the state survives the msgpack boundary byte-identical');
  await waitFor('rejection report', () => reports.some((r) => (r as { type: string }).type === 'topology.rejected'));
  t.match(
    reports.find((r) => (r as { type: string }).type === 'topology.rejected'),
    { index: 1, error: { code: 'TORUS_EVENT_CONFLICT' } },
  );
  t.match(runtime.snapshot('topology-keeper'), { value: 'live', lastIndex: 15, digest: expected, rejected: 1 });
  await waitFor('applied entries forwarded', () => feed.length === 15);
  t.same(
    feed,
    log.map((e) => e.index),
    'the event feed gets every applied entry once, in order',
  );

  t.match(await runtime.request('topology-keeper', { type: 'topology' }), {
    nodes: [{ id: 'a' }, { id: 'b' }],
    links: [
      { source: 'a', sink: 'b' },
      { source: 'b', sink: 'a' },
    ],
  });
  t.match(await runtime.request('topology-keeper', { type: 'instance', id: 'inst-1' }), {
    id: 'inst-1',
    generation: 2,
    plan: { nodes: ['b', 'a'] },
  });
  await t.rejects(runtime.request('topology-keeper', { type: 'instance', id: 'nope' }), {
    code: 'TORUS_INSTANCE_UNKNOWN',
  });
  await t.rejects(runtime.request('topology-keeper', { type: 'instance' }), { code: 'TORUS_API_VALIDATION' });
  t.match(await runtime.request('topology-keeper', { type: 'placementState' }), {
    nodes: [{ id: 'a', memory: { ramAvailable: 1000 } }, { id: 'b' }],
  });
  t.match(await runtime.request('topology-keeper', { type: 'instances' }), {
    instances: [{ id: 'inst-1' }],
    lastIndex: 15,
  });
  t.match(await runtime.request('topology-keeper', { type: 'toReplace' }), { instances: [] });
  t.match(
    await runtime.request('topology-keeper', {
      type: 'apply',
      entries: [log[14], { ...log[0], index: 16, event: joined('c') }],
    }),
    {
      effects: [
        { kind: 'duplicate', index: 15 },
        { kind: 'applied', index: 16 },
      ],
      lastIndex: 16,
      pending: 0,
    },
  );

  // A new node: snapshot from the first replica, then the tail.
  await runtime.supervise({ name: 'replica', module: keeperModule, options: { eventsTo: null } });
  const snapshot = await runtime.request('topology-keeper', { type: 'state-snapshot' });
  t.match(await runtime.request('replica', { type: 'install-snapshot', snapshot }), {
    effects: [{ kind: 'installed', lastIndex: 16 }],
    lastIndex: 16,
  });
  const tail = { index: 17, term: 2, event: joined('d') };
  runtime.send('topology-keeper', { type: 'event', indexed: tail });
  runtime.send('replica', { type: 'event', indexed: tail });
  const [a, b] = await Promise.all([
    runtime.request<{ digest: string; lastIndex: number }>('topology-keeper', { type: 'state' }),
    runtime.request<{ digest: string; lastIndex: number }>('replica', { type: 'state' }),
  ]);
  t.equal(a.lastIndex, 17);
  t.equal(a.digest, b.digest, 'both replicas hold the same state');
  await t.rejects(
    runtime.request('replica', {
      type: 'install-snapshot',
      snapshot: { ...(snapshot as object), digest: 'f'.repeat(64) },
    }),
    { code: 'TORUS_PROTOCOL_INVALID' },
  );
});
