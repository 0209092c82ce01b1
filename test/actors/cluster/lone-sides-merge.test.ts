/**
 * Two sides that formed apart merge, and every node ends with the winning leader's state, including a follower of
 * the losing side whose applied entries reach past everything the winner has committed. Lone starters (no
 * membership known yet) commit alone, so the two sides hold different committed entries at the same indexes.
 * Before, such a follower kept applying its old side's state (a different state digest at the same applied
 * index) until the winner's commit passed its own, which an idle cluster never does. It notices two ways: its
 * chain differs at the leader's commit index (the commit check), or the leader answers its gap request with a
 * snapshot below its log's end (the leader's chain does not match there).
 */
import t from 'tap';
import { SimNet } from './fixtures/sim-net.js';
import type { EventBody } from '../../../src/protocols/peer-frames.js';

const ev = (n: number) => ({ type: 'E', n });
const applied = (net: SimNet, id: string) => net.nodes.get(id)!.applied.map((e) => JSON.stringify([e.index, e.event]));

/** a leads a and c, b leads alone; a commits 8 entries, b holds 12 more it has not committed (its disk is slow). */
function twoSides(termEntry?: (id: string) => EventBody): SimNet {
  const net = new SimNet();
  for (const [id, startedAt] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ] as const) {
    const node = net.add(id, startedAt);
    if (termEntry) node.cfg = { ...node.cfg, writes: { termEntry } };
  }
  net.connect('a', 'c');
  net.run(1500);
  net.input('a', { kind: 'propose', now: net.now, events: [1, 2, 3, 4, 5, 6, 7, 8].map(ev) });
  net.run(500);
  net.slowDisk.add('b');
  net.input('b', { kind: 'propose', now: net.now, events: [11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22].map(ev) });
  return net;
}

t.test(
  'the follower of the losing side takes the winner’s snapshot when its gap request is answered with one',
  async (t) => {
    const net = twoSides();
    t.same(net.leaders().sort(), ['a', 'b'], 'a leads a and c; b leads alone');
    t.equal(net.nodes.get('c')!.state.commit, 9, 'c applied a’s term entry and eight entries');
    t.equal(net.nodes.get('b')!.state.commit, 1, 'b committed only its term entry (the same no-op as a’s)');
    net.mesh();
    net.run(3000);
    t.same(net.leaders(), ['b'], 'b has the more complete log and leads');
    for (const id of ['a', 'c'])
      t.same(applied(net, id), applied(net, 'b'), `${id} holds the leader's committed state, nothing of a's side`);
    t.match(net.nodes.get('c')!.log.join('\n'), /log is not the leader’s; installing its snapshot/);
    net.sync('b');
    net.run(2000);
    for (const id of ['a', 'c']) t.same(applied(net, id), applied(net, 'b'), `${id} converged once b committed`);
    t.equal(net.nodes.get('b')!.applied.length, 14, 'b’s two term entries and its twelve entries');
  },
);

t.test('the follower of the losing side notices a different entry at the leader’s commit index', async (t) => {
  // Term entries that name their writer (as the product's LeaderElected does): the two sides differ at index 1.
  const net = twoSides((id) => ({ type: 'Noop', by: id }));
  // Only the commit check can tell c: its gap requests get no answer.
  net.filter = (_from, _to, frame) => frame.type !== 'gap-request';
  net.mesh();
  net.run(3000);
  t.same(net.leaders(), ['b']);
  t.same(applied(net, 'c'), applied(net, 'b'), 'c holds the leader’s committed state');
  t.match(net.nodes.get('c')!.log.join('\n'), /applied entries differ from the leader at its commit index/);
});
