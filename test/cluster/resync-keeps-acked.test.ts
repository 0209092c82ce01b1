/**
 * Issue #13 edge case: a follower that resyncs by snapshot (after an apply failure, or a diverged log) must not drop
 * entries it acknowledged beyond the snapshot. Before: the install emptied its log down to the leader's commit index
 * while the leader still counted its acknowledgement, so an entry could commit on a quorum that no longer held it,
 * and a later leader elected without it lost an acknowledged write. Now the follower keeps the entries after the
 * snapshot that agree with the leader's chain (Raft's InstallSnapshot rule), up to where its log is known to
 * differ, and a leader that sends a snapshot stops counting that follower beyond it until it acknowledges again.
 */
import t from 'tap';
import { lastIndex } from '../../src/cluster/log.js';
import { SimNet, realEntries } from './fixtures/sim-net.js';

const ev = (n: number) => ({ type: 'E', n });
const join = (id: string) => ({ type: 'Join', id });

function formed(): SimNet {
  const net = new SimNet();
  net.trackMembers = true;
  ['a', 'b', 'c'].forEach((id, i) => net.add(id, i + 1));
  net.mesh();
  net.run(1000);
  net.propose([join('a'), join('b'), join('c'), ev(1)]);
  net.run(600);
  return net;
}

t.test('a follower resyncing after an apply failure keeps the entries it acknowledged; the write survives the leader', async (t) => {
  const net = formed();
  t.same(net.leaders(), ['a']);
  const a = net.nodes.get('a')!;
  const b = net.nodes.get('b')!;
  net.partition(['c']); // c is cut off: a and b are the quorum (2 of 3)
  net.slowDisk.add('a'); // a's own fsync lags behind b's acknowledgement
  const [e] = net.propose([ev(2)]);
  t.ok(e && lastIndex(b.state.log) === e.index && b.state.durable === e.index, 'b holds the entry on disk and acknowledged it');
  t.ok(a.state.commit < e!.index, 'not committed yet: a has not fsynced its own copy');

  // b's state machine fails on an entry: it asks a for a snapshot, which a takes at its commit index (before e).
  // Saving the installed snapshot takes b a while (its disk), so a hears from b again only after that.
  net.slowDisk.add('b');
  net.input('b', { kind: 'apply-failed', now: net.now, index: b.state.commit, reason: 'test: apply failed' });
  net.deliver();
  t.ok(b.state.resync === null && b.state.commit < e!.index, 'b installed a snapshot older than the entry it acknowledged');
  t.equal(lastIndex(b.state.log), e!.index, 'b still holds the entry after the install (its log is not cut to the snapshot)');

  net.slowDisk.clear();
  net.sync('a');
  net.sync('b');
  t.ok(a.state.commit >= e!.index, 'both fsyncs done: a and b hold it, it commits, the caller is answered');

  // The leader dies at once; c comes back: b and c must elect a leader that has the acknowledged write.
  net.kill('a');
  net.connect('b', 'c');
  net.run(8000);
  const [leader] = net.leaders();
  t.ok(leader === 'b' || leader === 'c', `a new leader among b and c (${leader})`);
  for (const id of ['b', 'c']) t.same(realEntries(net.nodes.get(id)!).map((x) => x.event).filter((x) => x.type === 'E'), [ev(1), ev(2)], `${id} has the acknowledged write`);
});

t.test('a snapshot from the leader stops it counting the follower beyond it until the follower acknowledges again', async (t) => {
  const net = formed();
  const a = net.nodes.get('a')!;
  net.partition(['c']);
  net.slowDisk.add('a');
  const [e] = net.propose([ev(2)]);
  t.equal(a.state.match.b, e!.index, 'a counted b\'s acknowledgement');
  net.input('a', { kind: 'frame', now: net.now, from: 'b', frame: { type: 'snapshot-request' } });
  t.ok(a.state.commit < e!.index && (a.state.match.b ?? 0) <= a.state.commit, `a no longer counts b beyond its snapshot (match ${a.state.match.b}, commit ${a.state.commit})`);
});

t.test('a diverged follower keeps the agreeing entries after the snapshot and drops those that differ', async (t) => {
  const net = formed();
  const a = net.nodes.get('a')!;
  const b = net.nodes.get('b')!;
  const before = lastIndex(b.state.log);
  net.partition(['c']);
  net.slowDisk.add('a'); // a commits none of the three: its snapshot stays at `before`
  net.propose([ev(2), ev(3), ev(4)]);
  t.equal(lastIndex(b.state.log), before + 3, 'b holds three entries after the commit index');
  // An append that conflicts at the third (another term, as a leader of another term would have written it).
  net.input('b', { kind: 'frame', now: net.now, from: 'a', frame: { type: 'append', term: b.state.term, entries: [{ index: before + 3, term: b.state.term + 1, event: ev(99), at: net.now }], commit: a.state.commit, commitHash: '0' } });
  t.same(b.state.resync?.keepBelow, before + 3, 'b knows where its log differs');
  net.deliver();
  t.equal(b.state.resync, null, 'the snapshot arrived');
  t.equal(b.state.commit, before, 'at the leader\'s commit index');
  t.equal(lastIndex(b.state.log), before + 2, 'b kept the two agreeing entries after the snapshot and dropped the differing one');
});
