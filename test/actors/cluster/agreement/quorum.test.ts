/**
 * The quorum rule (src/actors/cluster/agreement/quorum.ts) as a pure function, then the agreement core with membership on a simulated
 * network: a node cut off from the majority neither starts a term nor writes, and on the heal it follows the
 * majority, whose work survives. Golden transcript: fixtures/partition.transcript.txt (TORUS_UPDATE_GOLDEN=1 to
 * regenerate after an intended change; review the diff).
 */
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { quorumOf } from '../../../../src/actors/cluster/agreement/quorum.js';
import { SimNet, membersOf, notNoop, realEntries } from '../fixtures/sim-net.js';

t.test('quorumOf: majority of the last known membership, exact half only with the lowest id', async (t) => {
  const rows: [string[], string, string[], boolean][] = [
    // members, self, live peers, ok
    [[], 'a', [], true], // no membership known: a fresh node may form a cluster
    [['a'], 'a', [], true], // a cluster of one
    [['a', 'b', 'c'], 'a', ['b'], true], // 2 of 3
    [['a', 'b', 'c'], 'c', [], false], // 1 of 3: the partitioned node
    [['a', 'b', 'c'], 'c', ['x', 'y'], false], // live peers that are not members do not count
    [['a', 'b'], 'a', [], true], // half, holding the lowest id
    [['a', 'b'], 'b', [], false], // half without the lowest id
    [['a', 'b'], 'b', ['a'], true],
    [['a', 'b', 'c', 'd'], 'c', ['d'], false], // 2 of 4 without a
    [['a', 'b', 'c', 'd'], 'b', ['a'], true], // 2 of 4 with a
    [['a', 'b', 'c', 'd'], 'b', ['a', 'c'], true],
    [['a', 'b', 'c'], 'z', ['a', 'b'], true], // not (yet) a member itself: its reachable members still count
    [['a', 'b', 'c', 'd', 'e'], 'd', ['e', 'a'], true], // 3 of 5
    [['a', 'b', 'c', 'd', 'e'], 'a', ['b'], false], // 2 of 5: the lowest id does not help below half
  ];
  for (const [members, self, live, ok] of rows) {
    const q = quorumOf(members, self, live);
    t.equal(q.ok, ok, `${self} with [${live}] of {${members}}: ${q.why}`);
  }
  const q = quorumOf(['a', 'b', 'c'], 'c', []);
  t.same({ members: q.members, reached: q.reached, needed: q.needed }, { members: 3, reached: 1, needed: 2 });
  t.match(q.why, /reaches 1 of 3 members, needs 2/);
  // Two sides that agree on the membership never both have a quorum.
  const ids = ['a', 'b', 'c', 'd'];
  for (let mask = 0; mask < 16; mask++) {
    const side = ids.filter((_, i) => mask & (1 << i));
    const other = ids.filter((id) => !side.includes(id));
    const okA = side.length > 0 && quorumOf(ids, side[0]!, side).ok;
    const okB = other.length > 0 && quorumOf(ids, other[0]!, other).ok;
    t.notOk(okA && okB, `split {${side}} | {${other}}: not both`);
  }
});

const ev = (n: number) => ({ type: 'E', n });
const join = (id: string) => ({ type: 'Join', id });
const gone = (id: string) => ({ type: 'Gone', id });

/** The nodes (a, b, c by default) formed with that membership and one event; returns the net. */
function formed(ids: readonly string[] = ['a', 'b', 'c']): SimNet {
  const net = new SimNet();
  net.trackMembers = true;
  ids.forEach((id, i) => net.add(id, i + 1));
  net.mesh();
  net.run(1000);
  net.propose([...ids.map(join), ev(1)]);
  net.run(600); // followers learn the commit index with the next heartbeat (400 ms)
  return net;
}

/** What the real shell does on a leader: NodeGone for members it no longer hears (membership.ts). */
function lonelyLeaderWrites(net: SimNet, id: string, events: object[]): void {
  net.input(id, { kind: 'propose', now: net.now, events: events as { type: string }[] });
}

t.test(
  'partition of a follower: it stays leaderless in its term, the majority keeps writing, the heal keeps the majority work',
  async (t) => {
    const net = formed();
    const out: string[] = [];
    const mark = (title: string) => {
      out.push(`## ${title}`, ...net.transcript.splice(0));
      for (const [id, n] of [...net.nodes].sort()) {
        out.push(
          `   ${id}: ${n.state.role} term=${n.state.term} leader=${n.state.leader ?? '-'} quorum=${n.state.quorum?.ok ? 'ok' : 'no'} members=${(n.state.members ?? []).join(',')} applied=${n.applied.map((e) => e.index).join(',') || '-'}`,
        );
      }
    };
    mark('formed: a leads {a, b, c}');
    t.same(net.leaders(), ['a']);
    const termBefore = net.nodes.get('c')!.state.term;

    net.partition(['c']);
    net.run(5000);
    lonelyLeaderWrites(net, 'c', [gone('a'), gone('b')]); // would be written if c could lead
    net.propose([gone('c'), ev(2)]); // the majority declares c gone and does work
    net.run(500);
    mark('c cut off: it loses its leader and the quorum, never campaigns; a and b write');
    t.same(net.leaders(), ['a'], 'only the majority has a leader');
    t.equal(net.nodes.get('c')!.state.term, termBefore, 'the cut node did not start a term');
    t.equal(net.nodes.get('c')!.state.quorum?.ok, false, 'the cut node knows it has no quorum');
    t.same(
      net.nodes
        .get('c')!
        .applied.map((e) => e.event)
        .filter(notNoop),
      [join('a'), join('b'), join('c'), ev(1)],
      'its state is still readable, unchanged',
    );

    net.mesh();
    net.run(2000);
    net.propose([join('c')]); // the leader re-admits it (the shell's NodeJoined)
    net.run(500);
    mark('healed: c follows a and catches up; a re-admits it');
    t.same(net.leaders(), ['a'], 'the majority leader stays');
    const want = [join('a'), join('b'), join('c'), ev(1), gone('c'), ev(2), join('c')];
    for (const id of ['a', 'b', 'c'])
      t.same(
        net.nodes
          .get(id)!
          .applied.map((e) => e.event)
          .filter(notNoop),
        want,
        `${id} holds the majority's log`,
      );
    t.same(membersOf(net.nodes.get('c')!.applied), ['a', 'b', 'c']);

    const text = `${out.join('\n')}\n`;
    const golden = fileURLToPath(new URL('../fixtures/partition.transcript.txt', import.meta.url));
    if (process.env.TORUS_UPDATE_GOLDEN === '1') writeFileSync(golden, text);
    t.equal(text, readFileSync(golden, 'utf8'), 'golden transcript');
  },
);

t.test(
  'partition of the leader: it steps down on losing the quorum; the majority elects and its newer term wins',
  async (t) => {
    const net = formed();
    net.partition(['a']);
    net.run(5000);
    t.same(net.leaders(), ['b'], 'b leads the majority; a stepped down');
    t.ok(
      net.transcript.some((l) => /a quorum lost 1\/3/.test(l)),
      'a reports the lost quorum',
    );
    t.ok(
      net.nodes.get('a')!.log.some((l) => l.includes('lost the quorum')),
      'and why it stepped down',
    );
    lonelyLeaderWrites(net, 'a', [gone('b'), gone('c')]);
    t.equal(realEntries(net.nodes.get('a')!).length, 4, 'the cut node commits nothing');
    net.propose([gone('a'), ev(2)]);
    net.mesh();
    net.run(2000);
    net.propose([join('a')]);
    net.run(500);
    t.same(net.leaders(), ['b']);
    for (const id of ['a', 'b', 'c'])
      t.same(
        net.nodes
          .get(id)!
          .applied.map((e) => e.event)
          .filter(notNoop),
        [join('a'), join('b'), join('c'), ev(1), gone('a'), ev(2), join('a')],
        `${id} holds the majority's log`,
      );
  },
);

t.test('two-node cluster: the lowest id keeps leading alone; the other keeps its state read-only', async (t) => {
  for (const cut of ['a', 'b']) {
    const net = formed(['a', 'b']);
    net.partition([cut]);
    net.run(5000);
    t.same(net.leaders(), ['a'], `${cut} cut: a (the lowest id) leads`);
    const b = net.nodes.get('b')!;
    t.equal(b.state.quorum?.ok, false, 'b has no quorum');
    t.equal(b.state.leader, null, 'b has no leader');
    t.equal(realEntries(b).length, 3, 'b still holds the state');
    net.propose([gone('b')]);
    net.run(200);
    t.same(net.nodes.get('a')!.state.members ?? [], ['a'], 'a writes b gone: a cluster of one');
    net.mesh();
    net.run(2000);
    net.propose([join('b')]);
    net.run(500);
    t.same(net.leaders(), ['a']);
    t.same(
      b.applied.map((e) => e.event).filter(notNoop),
      [join('a'), join('b'), ev(1), gone('b'), join('b')],
      'b rejoins and catches up',
    );
  }
});

t.test('a fresh node (no membership known) still forms a cluster on its own', async (t) => {
  const net = new SimNet();
  net.trackMembers = true;
  net.add('a', 1);
  net.run(1000);
  t.same(net.leaders(), ['a']);
  net.propose([join('a')]);
  net.run(100);
  t.same(net.nodes.get('a')!.state.members ?? [], ['a']);
  t.equal(net.nodes.get('a')!.state.role, 'leader', 'a cluster of one keeps its quorum');
});

t.test(
  'two nodes: the lowest id restarts without its state and leads alone before it meets b: it yields to b',
  async (t) => {
    const net = formed(['a', 'b']);
    net.kill('a');
    net.run(5000);
    t.same(net.leaders(), [], 'b alone, without the lowest id: no leader');
    net.add('a', 9000); // restarted, empty log: may form a cluster on its own
    net.run(1000);
    t.same(net.leaders(), ['a'], 'the fresh a leads alone');
    lonelyLeaderWrites(net, 'a', [join('a')]);
    net.mesh();
    net.run(3000);
    t.same(net.leaders(), ['b'], 'b, with the more complete log and a quorum once a is back, leads: a yielded');
    t.ok(net.nodes.get('a')!.log.some((l) => l.includes('yielding to a candidate with a more complete log')));
    const terms = net.transcript.filter((l) => / candidate /.test(l)).length;
    t.ok(terms <= 3, `no election storm (${terms} campaigns)`);
    for (const id of ['a', 'b'])
      t.same(
        net.nodes
          .get(id)!
          .applied.map((e) => e.event)
          .filter(notNoop),
        [join('a'), join('b'), ev(1)],
        `${id} holds b's log`,
      );
  },
);
