/**
 * Commit before acknowledge, an edge case: a follower that resyncs by snapshot (after an apply failure, or a diverged log) must not drop
 * entries it acknowledged beyond the snapshot. Before: the install emptied its log down to the leader's commit index
 * while the leader still counted its acknowledgement, so an entry could commit on a quorum that no longer held it,
 * and a later leader elected without it lost an acknowledged write. Now the follower keeps the entries after the
 * snapshot that agree with the leader's chain (Raft's InstallSnapshot rule), up to where its log is known to
 * differ, and a leader that sends a snapshot stops counting that follower beyond it until it acknowledges again.
 * Entries not proven to be the leader's (its last chain hash differs from ours) are dropped as before: two lone
 * leaders of one term hold different entries under equal terms (the last test).
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import {
  appendEntries,
  emptyLog,
  hashAt,
  lastHash,
  lastIndex,
  resetTo,
} from '../../../src/actors/cluster/agreement/log.js';
import { StateStore } from '../../../src/actors/cluster/storage/state-store.js';
import { topologyReplica } from '../../../src/actors/cluster/topology-state.js';
import { clusterNameHash } from '../../../src/actors/cluster/transport/auth.js';
import { createLogger } from '../../../src/runtime/log.js';
import type { IndexedEnvelope } from '../../../src/protocols/peer-frames.js';
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

t.test(
  'a follower resyncing after an apply failure keeps the entries it acknowledged; the write survives the leader',
  async (t) => {
    const net = formed();
    t.same(net.leaders(), ['a']);
    const a = net.nodes.get('a')!;
    const b = net.nodes.get('b')!;
    net.partition(['c']); // c is cut off: a and b are the quorum (2 of 3)
    net.slowDisk.add('a'); // a's own fsync lags behind b's acknowledgement
    const [e] = net.propose([ev(2)]);
    net.run(500); // a's heartbeat tells b its last index and chain hash: b's log is proven to be a's up to there
    t.ok(
      e && lastIndex(b.state.log) === e.index && b.state.durable === e.index,
      'b holds the entry on disk and acknowledged it',
    );
    t.ok(a.state.commit < e!.index, 'not committed yet: a has not fsynced its own copy');

    // b's state machine fails on an entry: it asks a for a snapshot, which a takes at its commit index (before e).
    // Saving the installed snapshot takes b a while (its disk), so a hears from b again only after that.
    net.slowDisk.add('b');
    net.input('b', { kind: 'apply-failed', now: net.now, index: b.state.commit, reason: 'test: apply failed' });
    net.deliver();
    t.ok(
      b.state.resync === null && b.state.commit < e!.index,
      'b installed a snapshot older than the entry it acknowledged',
    );
    t.equal(
      lastIndex(b.state.log),
      e!.index,
      'b still holds the entry after the install (its log is not cut to the snapshot)',
    );

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
    for (const id of ['b', 'c'])
      t.same(
        realEntries(net.nodes.get(id)!)
          .map((x) => x.event)
          .filter((x) => x.type === 'E'),
        [ev(1), ev(2)],
        `${id} has the acknowledged write`,
      );
  },
);

t.test(
  'a snapshot from the leader stops it counting the follower beyond it until the follower acknowledges again',
  async (t) => {
    const net = formed();
    const a = net.nodes.get('a')!;
    net.partition(['c']);
    net.slowDisk.add('a');
    const [e] = net.propose([ev(2)]);
    t.equal(a.state.match.b, e!.index, "a counted b's acknowledgement");
    net.input('a', { kind: 'frame', now: net.now, from: 'b', frame: { type: 'snapshot-request' } });
    t.ok(
      a.state.commit < e!.index && (a.state.match.b ?? 0) <= a.state.commit,
      `a no longer counts b beyond its snapshot (match ${a.state.match.b}, commit ${a.state.commit})`,
    );
  },
);

t.test("a diverged follower keeps the entries proven to be the leader's and drops those that differ", async (t) => {
  const net = formed();
  const a = net.nodes.get('a')!;
  const b = net.nodes.get('b')!;
  const before = lastIndex(b.state.log);
  net.partition(['c']);
  net.slowDisk.add('a'); // a commits none of the three: its snapshot stays at `before`
  net.propose([ev(2), ev(3), ev(4)]);
  net.run(500);
  t.equal(lastIndex(b.state.log), before + 3, 'b holds three entries after the commit index');
  // An append that conflicts at the third (another term, as a leader of another term would have written it).
  net.input('b', {
    kind: 'frame',
    now: net.now,
    from: 'a',
    frame: {
      type: 'append',
      term: b.state.term,
      entries: [{ index: before + 3, term: b.state.term + 1, event: ev(99), at: net.now }],
      commit: a.state.commit,
      commitHash: '0',
    },
  });
  t.same(b.state.resync?.keepBelow, before + 3, 'b knows where its log differs');
  net.deliver();
  t.equal(b.state.resync, null, 'the snapshot arrived');
  t.equal(b.state.commit, before, "at the leader's commit index");
  t.equal(
    lastIndex(b.state.log),
    before + 2,
    'b kept the two agreeing entries after the snapshot and dropped the differing one',
  );
});

t.test('the data dir keeps the entries after an installed snapshot older than the last one saved', async (t) => {
  const dir = mkdtempSync(joinPath(tmpdir(), 'torus-keep-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const C = clusterNameHash('test');
  const nodeJoined = (id: string, index: number): IndexedEnvelope => ({
    index,
    term: 1,
    at: 1000 + index,
    event: {
      type: 'NodeJoined',
      nodeId: id,
      name: id,
      incarnation: 1,
      apiPort: 7000,
      apiAddresses: [{ ip: '10.77.0.1', port: 7000 }],
      peerPort: 7001,
      version: 'v',
    },
  });
  const entries = ['a', 'b', 'c', 'd', 'e'].map((id, i) => nodeJoined(id, i + 1));
  const stateAt = (n: number) =>
    entries.slice(0, n).reduce((s, e) => topologyReplica.apply(s, e), topologyReplica.initial());
  const full = appendEntries(emptyLog, entries);
  const open = () =>
    new StateStore({
      dataDir: dir,
      replica: topologyReplica,
      cluster: C,
      retain: 4096,
      log: createLogger({ component: 'test' }),
      now: () => 1,
    });
  const store = open();
  store.load();
  store.save(stateAt(5), 5, full); // this node had applied all five
  // A leader's snapshot at 3 (its commit index lags): the node keeps 4 and 5, which agree with the leader's chain.
  const kept = appendEntries(resetTo(3, 1, hashAt(full, 3)!), entries.slice(3));
  store.save(stateAt(3), 3, kept);
  store.close();
  const r = open().load();
  t.equal(r.commit, 3, 'restored at the installed snapshot');
  t.equal(lastIndex(r.log), 5, 'with the kept entries after it in the saved log');
  t.equal(lastHash(r.log), lastHash(full), 'the same chain');
});

t.test("a former lone leader of the same term keeps none of its own entries over the winner's snapshot", async (t) => {
  // a and b each led term 1 alone (fresh nodes that had not met): equal terms, different entries.
  const net = new SimNet();
  net.add('a', 1);
  net.add('b', 2);
  net.run(1000);
  t.same(net.leaders(), ['a', 'b'], 'two lone leaders of term 1');
  net.input('b', { kind: 'propose', now: net.now, events: [ev(10), ev(11)] });
  net.input('a', { kind: 'propose', now: net.now, events: [ev(1)] });
  net.mesh();
  net.run(3000);
  t.same(net.leaders(), ['b'], 'the longer log leads');
  net.propose([ev(12)]);
  net.run(1000);
  const a = net.nodes.get('a')!;
  t.same(
    realEntries(a).map((x) => x.event),
    [ev(10), ev(11), ev(12)],
    "a holds b's entries only, and applies them",
  );
  t.equal(a.state.commit, net.nodes.get('b')!.state.commit, "and follows b's commit index");
});

t.test(
  'followers with empty logs catch up from a leader that committed nothing yet (no empty-snapshot loop)',
  async (t) => {
    // A cluster forming with three members at once: the leader's entries (its term entry, the joins) wait for a quorum;
    // the followers missed the appends. Before, a follower with an empty log asked for a snapshot, got the leader's
    // empty one (commit 0), asked again, forever; the leader waited for their acknowledgements forever.
    const net = new SimNet();
    net.trackMembers = true;
    ['a', 'b', 'c'].forEach((id, i) => net.add(id, i + 1));
    net.mesh();
    net.slowDisk.add('a');
    net.filter = (_from, _to, f) => f.type !== 'append';
    net.run(1000);
    t.same(net.leaders(), ['a']);
    net.propose([join('a'), join('b'), join('c'), ev(1)]);
    net.run(1000);
    const a = net.nodes.get('a')!;
    t.equal(a.state.commit, 0, 'nothing committed: the followers hold none of it');
    net.filter = () => true;
    net.slowDisk.clear();
    net.sync('a');
    net.run(3000);
    t.ok(a.state.commit >= 5, `the leader commits (commit ${a.state.commit})`);
    for (const id of ['b', 'c'])
      t.same(
        realEntries(net.nodes.get(id)!)
          .map((x) => x.event)
          .filter((x) => x.type === 'E'),
        [ev(1)],
        `${id} caught up`,
      );
  },
);
