import t from 'tap';
import { createActor } from 'xstate';
import { topologyKeeperMachine, type KeeperEmitted } from '../../../src/actors/topology-keeper/machine.js';
import { decodeKeeperEvent, decodeApplyRequest } from '../../../src/actors/topology-keeper/messages.js';
import {
  instanceAnswer,
  instancesAnswer,
  keeperView,
  placementStateAnswer,
  snapshotAnswer,
  stateAnswer,
  toReplaceAnswer,
  topologyAnswer,
} from '../../../src/actors/topology-keeper/queries.js';
import { ValidationError } from '../../../src/protocols/errors.js';
import { applyEvents } from '../../../src/actors/topology-keeper/apply.js';
import { stateDigest } from '../../../src/actors/topology-keeper/digest.js';
import { decodeSnapshot, encodeSnapshot } from '../../../src/actors/topology-keeper/snapshot.js';
import { emptyState } from '../../../src/actors/topology-keeper/state.js';
import { everyEvent, indexed, joined } from '../../fixtures/topology/events.js';

const log = indexed(everyEvent.slice(0, 12));

t.test('machine: live/waiting, emits for gaps, rejections and changes', async (t) => {
  const actor = createActor(topologyKeeperMachine, { input: {} }).start();
  const emitted: string[] = [];
  const listen = (e: KeeperEmitted) =>
    emitted.push(
      e.type === 'topology.gap'
        ? `gap ${e.from}-${e.to}`
        : e.type === 'topology.changed'
          ? `changed ${e.lastIndex}`
          : `rejected ${e.rejection.index}`,
    );
  actor.on('*', listen);
  actor.send({ type: 'event', indexed: log[0]! });
  t.equal(actor.getSnapshot().value, 'live');
  actor.send({ type: 'events', entries: [log[3]!, log[2]!] });
  t.equal(actor.getSnapshot().value, 'waiting', 'entries held behind a gap');
  actor.send({ type: 'event', indexed: log[1]! });
  t.equal(actor.getSnapshot().value, 'live');
  actor.send({ type: 'event', indexed: { ...log[1]!, event: joined('zz') } });
  t.same(emitted, ['changed 1', 'gap 2-2', 'changed 4', 'rejected 2']);
  const ctx = actor.getSnapshot().context;
  t.equal(ctx.rejectedCount, 1);
  t.match(ctx.lastRejection, { index: 2, error: { code: 'TORUS_EVENT_CONFLICT' } });
  t.match(keeperView(actor.getSnapshot().value, ctx.buffer, ctx.rejectedCount, ctx.lastRejection), {
    value: 'live',
    lastIndex: 4,
    pending: 0,
    rejected: 1,
    lastRejection: { index: 2, code: 'TORUS_EVENT_CONFLICT' },
    counts: { nodes: 2 },
  });
  actor.stop();
});

t.test('machine: a snapshot catches a fresh keeper up, then the tail applies', async (t) => {
  const snap = encodeSnapshot(applyEvents(emptyState, log.slice(0, 8)));
  const actor = createActor(topologyKeeperMachine, { input: {} }).start();
  actor.send({ type: 'events', entries: log.slice(9) });
  t.equal(actor.getSnapshot().value, 'waiting');
  actor.send({ type: 'install-snapshot', snapshot: snap });
  t.equal(actor.getSnapshot().value, 'waiting', 'index 9 still missing');
  actor.send({ type: 'event', indexed: log[8]! });
  t.equal(actor.getSnapshot().value, 'live');
  t.equal(stateDigest(actor.getSnapshot().context.buffer.state), stateDigest(applyEvents(emptyState, log)));
  actor.stop();
});

t.test('messages are decoded strictly', async (t) => {
  t.match(decodeKeeperEvent({ type: 'event', indexed: log[0] }), { type: 'event', indexed: { index: 1 } });
  t.match(decodeApplyRequest({ type: 'apply', entries: log }), { type: 'events' });
  const snap = JSON.parse(JSON.stringify(encodeSnapshot(applyEvents(emptyState, log))));
  t.match(decodeKeeperEvent({ type: 'install-snapshot', snapshot: snap, force: true }), { force: true });
  for (const [bad, why] of [
    [{ type: 'event', indexed: log[0], x: 1 }, /body\.x: unknown field/],
    [{ type: 'events', entries: [log[0], { ...log[1], index: -1 }] }, /body\.entries\[1\]\.index/],
    [{ type: 'nope' }, /body\.type/],
    [{ type: 'install-snapshot', snapshot: { ...snap, digest: '0'.repeat(64) } }, /snapshot\.digest/],
    [null, /body/],
  ] as const) {
    t.throws(() => decodeKeeperEvent(bad), ValidationError);
    try {
      decodeKeeperEvent(bad);
    } catch (e) {
      t.match((e as Error).message, why);
    }
  }
});

t.test('queries answer plain data from the buffer', async (t) => {
  const actor = createActor(topologyKeeperMachine, { input: {} }).start();
  actor.send({ type: 'events', entries: log });
  const b = actor.getSnapshot().context.buffer;
  const s = stateAnswer(b);
  t.equal(s.digest, stateDigest(s.state));
  t.equal(s.lastIndex, 12);
  t.same(
    topologyAnswer(b).nodes.map((n) => n.id),
    ['a', 'b'],
  );
  t.equal(topologyAnswer(b).links.length, 2);
  t.same(
    instancesAnswer(b).instances.map((i) => [i.id, i.status]),
    [['inst-1', 'active']],
  );
  t.match(instanceAnswer(b, 'inst-1'), { id: 'inst-1', generation: 1, tasks: ['t1'] });
  t.throws(() => instanceAnswer(b, 'nope'), { code: 'TORUS_INSTANCE_UNKNOWN' });
  t.throws(() => instanceAnswer(b, 'constructor'), { code: 'TORUS_INSTANCE_UNKNOWN' });
  t.equal(placementStateAnswer(b).nodes.length, 2);
  t.same(toReplaceAnswer(b).instances, []);
  t.equal(decodeSnapshot(JSON.parse(JSON.stringify(snapshotAnswer(b)))).digest, s.digest);
  actor.stop();
});
