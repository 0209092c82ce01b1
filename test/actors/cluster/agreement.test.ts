import t from 'tap';
import { SimNet, notNoop, realEntries } from './fixtures/sim-net.js';

const ev = (n: number) => ({ type: 'Test', n });

t.test('cold start: the longest-lived node leads, all follow', async (t) => {
  const net = new SimNet();
  net.add('c', 300);
  net.add('a', 200);
  net.add('b', 100);
  net.add('d', 400);
  net.mesh();
  net.run(2000);
  t.same(net.leaders(), ['b'], 'earliest start wins');
  for (const [id, n] of net.nodes) if (id !== 'b') t.equal(n.state.leader, 'b', `${id} follows b`);
  t.ok(
    net.transcript.some((l) => l.includes('b leader term=1')),
    net.transcript.join('\n'),
  );
});

t.test('sequencing reaches every node in order', async (t) => {
  const net = new SimNet();
  for (const [i, id] of ['a', 'b', 'c'].entries()) net.add(id, i);
  net.mesh();
  net.run(1500);
  const out = net.propose([ev(1), ev(2), ev(3)]);
  t.same(
    out.map((e) => e.index),
    [2, 3, 4],
    "after the leader's first entry of its term (index 1)",
  );
  net.run(500);
  for (const [id, n] of net.nodes) t.same(n.applied.map((e) => e.event).filter(notNoop), [ev(1), ev(2), ev(3)], id);
});

t.test('leader crash: the most complete log wins, state survives', async (t) => {
  const net = new SimNet();
  net.add('a', 1);
  net.add('b', 2);
  net.add('c', 3);
  net.add('d', 4);
  net.mesh();
  net.run(1500);
  t.same(net.leaders(), ['a']);
  net.propose([ev(1), ev(2)]);
  // c misses the third entry: the older-started b and the younger d... only d gets it
  net.filter = (_from, to, f) => !(f.type === 'append' && (to === 'b' || to === 'c'));
  net.propose([ev(3)]);
  net.filter = () => true;
  net.kill('a');
  net.run(6000);
  t.same(net.leaders(), ['d'], 'd holds the longest log, so d leads although b is older');
  net.run(1000);
  for (const id of ['b', 'c', 'd'])
    t.same(
      net.nodes
        .get(id)!
        .applied.map((e) => e.event)
        .filter(notNoop),
      [ev(1), ev(2), ev(3)],
      `${id} has all events`,
    );
  const newTerm = net.nodes.get('d')!.state.term;
  t.ok(newTerm > 1, 'new term');
  net.propose([ev(4)]);
  net.run(500);
  for (const id of ['b', 'c', 'd'])
    t.same(
      realEntries(net.nodes.get(id)!).map((e) => e.event),
      [ev(1), ev(2), ev(3), ev(4)],
      `${id} continues with entry 4`,
    );
});

t.test('follower gap: lost appends are fetched with a bounded gap request', async (t) => {
  const net = new SimNet();
  net.add('a', 1);
  net.add('b', 2);
  net.mesh();
  net.run(1500);
  net.propose([ev(1)]);
  let drop = true;
  const seen: string[] = [];
  net.filter = (_from, _to, f) => {
    if (f.type === 'gap-request') seen.push(`${f.from}-${f.to}`);
    return !(drop && f.type === 'append');
  };
  net.propose([ev(2), ev(3)]);
  drop = false;
  net.propose([ev(4)]);
  net.run(500);
  t.same(seen, ['3-4'], "asked exactly for the gap (index 1 is the leader's first entry)");
  t.same(
    realEntries(net.nodes.get('b')!).map((e) => e.event),
    [ev(1), ev(2), ev(3), ev(4)],
  );
});

t.test('trailing loss is noticed through the leader heartbeat', async (t) => {
  const net = new SimNet();
  net.add('a', 1);
  net.add('b', 2);
  net.mesh();
  net.run(1500);
  net.filter = (_from, _to, f) =>
    f.type !== 'append' || f.entries.length !== 1 || (f.entries[0]!.event as { n?: number }).n !== 2;
  net.propose([ev(1)]);
  net.propose([ev(2)]);
  net.filter = () => true;
  net.run(1000);
  t.same(
    realEntries(net.nodes.get('b')!).map((e) => e.event),
    [ev(1), ev(2)],
  );
});

t.test('a node joining late gets a snapshot, then the tail', async (t) => {
  const net = new SimNet();
  net.add('a', 1);
  net.add('b', 2);
  net.mesh();
  net.run(1500);
  net.propose([ev(1), ev(2), ev(3)]);
  net.add('c', 50);
  net.run(200);
  net.mesh();
  net.run(800);
  net.propose([ev(4)]);
  net.run(300);
  t.same(net.leaders(), ['a'], 'the new node does not take over');
  t.same(
    realEntries(net.nodes.get('c')!).map((e) => e.event),
    [ev(1), ev(2), ev(3), ev(4)],
  );
  t.ok(net.transcript.some((l) => l.includes('c follower term=1 leader=a')));
});

t.test('follower crash: closed after the failure timeout', async (t) => {
  const net = new SimNet();
  net.add('a', 1);
  net.add('b', 2);
  net.add('c', 3);
  net.mesh();
  net.run(1500);
  net.kill('c');
  const killedAt = net.now;
  net.run(4000);
  const closes = net.transcript.filter((l) => l.endsWith('closes c'));
  t.equal(closes.length, 2, 'both survivors close c');
  for (const l of closes) t.ok(Number(l.split(' ')[0]) - killedAt <= 3200, l);
  t.same(net.leaders(), ['a']);
});

t.test('two lone leaders merge: the better log stays leader, the other re-syncs', async (t) => {
  const net = new SimNet();
  net.add('a', 1);
  net.add('b', 2);
  net.run(1500);
  t.same(net.leaders().sort(), ['a', 'b'], 'each alone leads');
  net.input('b', { kind: 'propose', now: net.now, events: [ev(10), ev(11)] });
  net.input('a', { kind: 'propose', now: net.now, events: [ev(20)] });
  net.mesh();
  net.run(2000);
  t.same(net.leaders(), ['b'], 'b has the longer log');
  t.same(
    net.nodes
      .get('a')!
      .applied.map((e) => e.event)
      .filter(notNoop),
    [ev(10), ev(11)],
    'a re-synced from b',
  );
});

t.test('hostile appends: stale term, non-leader sender, duplicates with other payloads', async (t) => {
  const net = new SimNet();
  net.add('a', 1);
  net.add('b', 2);
  net.add('c', 3);
  net.mesh();
  net.run(1500);
  net.propose([ev(1)]);
  const term = net.nodes.get('b')!.state.term;
  // c pretends to sequence events
  net.input('b', {
    kind: 'frame',
    now: net.now,
    from: 'c',
    frame: { type: 'append', term, entries: [{ index: 2, term, event: ev(666) }], commit: 0, commitHash: '0' },
  });
  net.input('b', {
    kind: 'frame',
    now: net.now,
    from: 'a',
    frame: {
      type: 'append',
      term: 0 + 1,
      entries: [{ index: 1, term: 1, event: ev(999) }],
      commit: 0,
      commitHash: '0',
    },
  });
  net.input('b', {
    kind: 'frame',
    now: net.now,
    from: 'a',
    frame: { type: 'append', term: Math.max(term - 1, 1), entries: [], commit: 0, commitHash: '0' },
  });
  net.propose([ev(2)]);
  net.run(500);
  t.same(
    net.nodes
      .get('b')!
      .applied.map((e) => e.event)
      .filter(notNoop),
    [ev(1), ev(2)],
  );
  t.ok(net.nodes.get('b')!.log.some((l) => l.includes('not the leader')));
  t.ok(net.nodes.get('b')!.log.some((l) => l.includes('different payload')));
});

t.test('partition heals: the cut-off old leader cannot pull followers back, the newer log wins', async (t) => {
  const net = new SimNet();
  net.add('a', 1);
  net.add('b', 2);
  net.add('c', 3);
  net.mesh();
  net.run(1500);
  net.propose([ev(1)]);
  net.kill('a'); // cut: a keeps running but hears nobody
  net.nodes.get('a')!.alive = true;
  net.run(5000);
  t.same(net.leaders().sort(), ['a', 'b'], 'a still leads its side of one; b leads the other');
  net.input('a', { kind: 'propose', now: net.now, events: [ev(100), ev(101), ev(102)] });
  net.input('b', { kind: 'propose', now: net.now, events: [ev(2)] });
  net.deliver();
  net.mesh();
  net.run(3000);
  t.same(net.leaders(), ['b'], 'the leader with the newer term in its log stays');
  for (const id of ['a', 'b', 'c'])
    t.same(
      net.nodes
        .get(id)!
        .applied.map((e) => e.event)
        .filter(notNoop),
      [ev(1), ev(2)],
      `${id} holds the winner's log`,
    );
});
