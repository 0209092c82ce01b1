/**
 * The leader's own writes are the core's decisions: driven through `step` alone (no shell), the Ready of the input
 * that calls for one carries the entry — the term's first entry on winning, NodeJoined for a peer that joined,
 * NodeGone for a silent member or one the operator removed — and none is ever written twice.
 */
import t from 'tap';
import { initialAgreement, step } from '../../../../src/actors/cluster/agreement/agreement.js';
import {
  DEFAULT_TIMINGS,
  type AgreementConfig,
  type AgreementInput,
  type AgreementState,
  type Ready,
} from '../../../../src/actors/cluster/agreement/types.js';
import type { NodeDescriptor } from '../../../../src/actors/cluster/agreement/state-machine.js';
import { REMOVED_REASON } from '../../../../src/actors/cluster/agreement/own-writes.js';
import type { EventBody } from '../../../../src/protocols/peer-frames.js';

const desc = (nodeId: string, name = nodeId): NodeDescriptor => ({
  nodeId,
  name,
  incarnation: 1,
  apiPort: 1,
  peerPort: 2,
  version: 'v',
  addresses: ['10.77.0.1'],
});

function config(selfId: string, startedAt: number, check?: (e: EventBody) => void): AgreementConfig {
  return {
    ...DEFAULT_TIMINGS,
    selfId,
    startedAt,
    writes: {
      termEntry: (id) => ({ type: 'Elected', id }),
      membership: {
        self: desc(selfId),
        joined: (d) => ({ type: 'Join', id: d.nodeId, incarnation: d.incarnation }),
        gone: (id, reason) => ({ type: 'Gone', id, reason }),
      },
      ...(check ? { check } : {}),
    },
  };
}

/** A node driven input by input; `written` collects the events each step appended (its `persist` effects). */
class Driver {
  state: AgreementState;
  last: Ready | null = null;
  constructor(readonly cfg: AgreementConfig) {
    this.state = initialAgreement(0);
  }
  input(i: AgreementInput): EventBody[] {
    this.last = step(this.cfg, this.state, i);
    this.state = this.last.state;
    return this.last.effects.flatMap((fx) => (fx.kind === 'persist' ? fx.entries.map((e) => e.event) : []));
  }
  warnings(): string[] {
    return (this.last?.effects ?? []).flatMap((fx) => (fx.kind === 'warn' ? [fx.msg] : []));
  }
  /** Ticks every 100 ms up to `until`; returns what was written, in order. */
  ticks(from: number, until: number): EventBody[] {
    const out: EventBody[] = [];
    for (let now = from; now <= until; now += 100) out.push(...this.input({ kind: 'tick', now }));
    return out;
  }
}

t.test('a lone node that wins writes its term entry and its own NodeJoined in the winning step, once', async (t) => {
  const a = new Driver(config('a', 0));
  const before = a.ticks(100, 500);
  t.same(before, [], 'nothing while discovering');
  const won = a.input({ kind: 'tick', now: 600 });
  t.equal(a.state.role, 'leader');
  t.same(won, [
    { type: 'Elected', id: 'a' },
    { type: 'Join', id: 'a', incarnation: 1 },
  ]);
  t.same(a.state.listed, [{ nodeId: 'a', incarnation: 1 }], 'what it wrote is listed at once');
  t.same(a.ticks(700, 3000), [], 'never repeated');
});

t.test('a peer that joins a leader gets its NodeJoined in the joined step; a silent one its NodeGone', async (t) => {
  const a = new Driver(config('a', 0));
  a.ticks(100, 600);
  const joined = a.input({
    kind: 'joined',
    now: 700,
    nodeId: 'b',
    incarnation: 1,
    startedAt: 5,
    descriptor: desc('b'),
  });
  t.same(joined, [{ type: 'Join', id: 'b', incarnation: 1 }]);
  t.same(a.state.members, ['a', 'b']);
  t.same(a.ticks(800, 1500), [], 'not repeated while b is listed');
  a.input({ kind: 'left', now: 1600, nodeId: 'b' });
  // b was last heard at 700: gone once silent for longer than the failure timeout (a keeps the quorum of {a, b}
  // alone, holding the lowest id).
  const gone = a.ticks(1700, 4000);
  t.same(gone, [{ type: 'Gone', id: 'b', reason: 'no heartbeat for 3100 ms' }]);
  t.same(a.state.members, ['a']);
});

t.test('a rejoin under a new incarnation is announced again', async (t) => {
  const a = new Driver(config('a', 0));
  a.ticks(100, 600);
  a.input({ kind: 'joined', now: 700, nodeId: 'b', incarnation: 1, startedAt: 5, descriptor: desc('b') });
  a.input({ kind: 'left', now: 800, nodeId: 'b' });
  const again = a.input({
    kind: 'joined',
    now: 900,
    nodeId: 'b',
    incarnation: 2,
    startedAt: 850,
    descriptor: { ...desc('b'), incarnation: 2 },
  });
  t.same(again, [{ type: 'Join', id: 'b', incarnation: 2 }]);
});

t.test('an event the rules refuse is not written, and said', async (t) => {
  const check = (e: EventBody) => {
    if (e.type === 'Join' && e.id === 'evil') throw new Error('name too long');
  };
  const a = new Driver(config('a', 0, check));
  a.ticks(100, 600);
  const written = a.input({
    kind: 'joined',
    now: 700,
    nodeId: 'evil',
    incarnation: 1,
    startedAt: 5,
    descriptor: desc('evil'),
  });
  t.same(written, []);
  t.ok(a.warnings().includes('leader event refused'), a.warnings().join('; '));
  t.same(a.state.listed, [{ nodeId: 'a', incarnation: 1 }], 'not listed');
});

t.test(
  "the operator's removal while leaderless: not counted, then its NodeGone is the winner's first write",
  async (t) => {
    const a = new Driver(config('a', 0));
    const three = ['a', 'b', 'c'].map((nodeId) => ({ nodeId, incarnation: 1 }));
    a.input({ kind: 'members', now: 0, members: three });
    t.equal(a.state.quorum.ok, false, 'a alone is 1 of 3');
    t.same(a.ticks(100, 1500), [], 'no quorum: no campaign, nothing written');
    a.input({ kind: 'remove', now: 1550, nodeId: 'b' });
    t.same(a.state.members, ['a', 'c'], 'b no longer counts');
    t.equal(a.state.quorum.ok, true, 'a holds half of {a, c} with the lowest id');
    const written = a.ticks(1600, 2500);
    t.equal(a.state.role, 'leader');
    t.same(written.slice(0, 2), [
      { type: 'Elected', id: 'a' },
      { type: 'Gone', id: 'b', reason: REMOVED_REASON },
    ]);
    t.same(a.state.removed, [], 'done once the log no longer lists b');
    t.notOk(
      written.slice(2).some((e) => e.type === 'Gone' && e.id === 'b'),
      'the removal is written once',
    );
  },
);

t.test(
  'a leader moved to a newer term without an election writes a term entry only once older entries wait',
  async (t) => {
    // b leads {a, b}; a never acknowledges, so b's entries stay uncommitted (b alone is half without the lowest id).
    const b = new Driver(config('b', 0));
    b.input({
      kind: 'members',
      now: 0,
      members: [
        { nodeId: 'a', incarnation: 1 },
        { nodeId: 'b', incarnation: 1 },
      ],
    });
    b.input({ kind: 'joined', now: 0, nodeId: 'a', incarnation: 1, startedAt: 10, descriptor: desc('a') });
    b.ticks(100, 800); // quorum since the join at 0: it hears heartbeats for two beats before campaigning
    t.equal(b.state.role, 'candidate');
    const vote = { type: 'vote', term: 1, granted: true, leader: null, lastIndex: 0, lastTerm: 0 } as const;
    const won = b.input({ kind: 'frame', now: 850, from: 'a', frame: vote });
    t.equal(b.state.role, 'leader');
    t.same(won, [{ type: 'Elected', id: 'b' }], 'won: the term entry (both are listed already)');
    // A candidate in a newer term: the leader moves past it (no election, no new entry at once).
    const request = { type: 'vote-request', term: 5, lastIndex: 0, lastTerm: 0 } as const;
    t.same(b.input({ kind: 'frame', now: 900, from: 'a', frame: request }), []);
    t.equal(b.state.term, 6);
    t.equal(b.state.role, 'leader');
    const early = b.ticks(1000, 2000);
    t.same(early, [], 'not while the new term is settling (3 heartbeats)');
    const settled = b.ticks(2100, 2700);
    t.same(settled, [{ type: 'Elected', id: 'b' }], 'then one entry of the new term, so the older one can commit');
    t.same(b.ticks(2800, 3000), [], 'once per term');
  },
);
