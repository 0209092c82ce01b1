import t from 'tap';
import {
  createBuffer,
  offerEvent,
  offerEvents,
  installSnapshot,
  type BufferEffect,
  type EventBuffer,
} from '../../../src/actors/topology-keeper/event-buffer.js';
import { applyEvents } from '../../../src/actors/topology-keeper/apply.js';
import { emptyState } from '../../../src/actors/topology-keeper/state.js';
import { encodeSnapshot } from '../../../src/actors/topology-keeper/snapshot.js';
import { stateDigest } from '../../../src/actors/topology-keeper/digest.js';
import { everyEvent, indexed, joined } from '../../fixtures/topology/events.js';

const log = indexed(everyEvent);
const summary = (effects: readonly BufferEffect[]) =>
  effects
    .map((e) => {
      switch (e.kind) {
        case 'gap':
          return `gap ${e.from}-${e.to}`;
        case 'rejected':
          return `rejected ${e.index} ${e.error.code}`;
        case 'installed':
          return `installed ${e.lastIndex}`;
        default:
          return `${e.kind} ${e.index}`;
      }
    })
    .join(', ');

t.test('in order: each entry is applied at once', async (t) => {
  let b = createBuffer();
  for (const e of log.slice(0, 3)) {
    const step = offerEvent(b, e);
    t.equal(summary(step.effects), `applied ${e.index}`);
    b = step.buffer;
  }
  t.equal(b.state.lastIndex, 3);
  t.equal(b.pending.length, 0);
});

t.test('out of order: buffered, a gap is reported, then drained when the gap fills', async (t) => {
  let b = createBuffer();
  let step = offerEvent(b, log[2]!);
  t.equal(summary(step.effects), 'buffered 3, gap 1-2');
  step = offerEvent(step.buffer, log[1]!);
  t.equal(summary(step.effects), 'buffered 2, gap 1-1');
  step = offerEvent(step.buffer, log[0]!);
  t.equal(summary(step.effects), 'applied 1, applied 2, applied 3');
  b = step.buffer;
  t.equal(
    stateDigest(b.state),
    stateDigest(applyEvents(emptyState, log.slice(0, 3))),
    'same state as in-order application',
  );
});

t.test('any permutation of the whole log gives the same state', async (t) => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const expected = stateDigest(applyEvents(emptyState, log));
  for (let round = 0; round < 20; round++) {
    const shuffled = [...log].sort(() => rand() - 0.5);
    const withDupes = [...shuffled, ...shuffled.slice(0, 5)];
    const { buffer, effects } = offerEvents(createBuffer(), withDupes);
    t.equal(stateDigest(buffer.state), expected, `round ${round}`);
    t.notOk(
      effects.some((e) => e.kind === 'rejected' || e.kind === 'gap'),
      'nothing rejected, no gap left',
    );
  }
});

t.test('duplicates: same payload ignored, different payload rejected (applied or pending)', async (t) => {
  const { buffer } = offerEvents(createBuffer(), log.slice(0, 3));
  t.equal(summary(offerEvent(buffer, log[1]!).effects), 'duplicate 2');
  t.equal(
    summary(offerEvent(buffer, { ...log[1]!, at: 123 }).effects),
    'duplicate 2',
    'the leader stamp is not part of the payload',
  );
  t.equal(summary(offerEvent(buffer, { ...log[1]!, event: joined('zz') }).effects), 'rejected 2 TORUS_EVENT_CONFLICT');
  t.equal(
    summary(offerEvent(buffer, { ...log[1]!, term: 9 }).effects),
    'rejected 2 TORUS_EVENT_CONFLICT',
    'another term is another entry',
  );
  const ahead = offerEvent(buffer, log[5]!).buffer;
  t.equal(summary(offerEvent(ahead, log[5]!).effects), 'duplicate 6');
  const conflict = offerEvent(ahead, { ...log[5]!, event: joined('zz') });
  t.equal(summary(conflict.effects), 'rejected 6 TORUS_EVENT_CONFLICT');
  t.equal(conflict.buffer, ahead, 'a rejected entry leaves the buffer as it was');
});

t.test('stale indices (older than the remembered window) and far-future indices are rejected', async (t) => {
  const limits = { maxAhead: 5, remember: 2 };
  const { buffer } = offerEvents(createBuffer(), log.slice(0, 4), limits);
  t.equal(summary(offerEvent(buffer, log[0]!, limits).effects), 'rejected 1 TORUS_EVENT_STALE');
  t.equal(summary(offerEvent(buffer, log[3]!, limits).effects), 'duplicate 4', 'still remembered');
  t.equal(
    summary(offerEvent(buffer, { ...log[0]!, index: 10 }, limits).effects),
    'rejected 10 TORUS_EVENT_OUT_OF_ORDER',
  );
  t.equal(summary(offerEvent(buffer, { ...log[0]!, index: 9 }, limits).effects), 'buffered 9, gap 5-8');
});

t.test('an entry whose term goes backwards is dropped when it comes up; the gap is reported again', async (t) => {
  let b: EventBuffer = offerEvents(createBuffer(), indexed(everyEvent.slice(0, 2), 1, 3)).buffer;
  const step = offerEvents(b, [
    { index: 4, term: 3, event: everyEvent[3]! },
    { index: 3, term: 2, event: everyEvent[2]! },
  ]);
  t.equal(summary(step.effects), 'buffered 4, rejected 3 TORUS_EVENT_STALE, gap 3-3');
  b = offerEvent(step.buffer, { index: 3, term: 3, event: everyEvent[2]! }).buffer;
  t.equal(b.state.lastIndex, 4);
});

t.test('install snapshot: catch-up, then the tail; older or conflicting snapshots are refused', async (t) => {
  const snap = encodeSnapshot(applyEvents(emptyState, log.slice(0, 10)));
  let step = offerEvents(createBuffer(), [log[11]!, log[10]!, log[2]!]);
  t.equal(step.buffer.state.lastIndex, 0);
  step = installSnapshot(step.buffer, snap);
  t.equal(summary(step.effects), 'installed 10, applied 11, applied 12');
  t.equal(stateDigest(step.buffer.state), stateDigest(applyEvents(emptyState, log.slice(0, 12))));
  t.equal(summary(installSnapshot(step.buffer, snap).effects), 'rejected 10 TORUS_EVENT_STALE');
  t.equal(summary(installSnapshot(offerEvents(createBuffer(), log.slice(0, 10)).buffer, snap).effects), 'duplicate 10');
  const other = encodeSnapshot(applyEvents(emptyState, [...log.slice(0, 9), { ...log[9]!, event: joined('q') }]));
  const mine = offerEvents(createBuffer(), log.slice(0, 10)).buffer;
  t.equal(summary(installSnapshot(mine, other).effects), 'rejected 10 TORUS_EVENT_CONFLICT');
  t.equal(
    summary(installSnapshot(step.buffer, snap, { force: true }).effects),
    'installed 10',
    'force replaces even a newer state',
  );
});
