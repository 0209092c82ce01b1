/**
 * The entries a node keeps for lagging followers are bounded in bytes as well as in count: with large entries the
 * retained tail stays under the byte budget (counting by the entries' encoded size), and a follower that falls
 * behind by more than the budget catches up by snapshot and then agrees with the others.
 */
import t from 'tap';
import {
  appendEntries,
  compactLog,
  emptyLog,
  entriesOf,
  lastIndex,
  sizesOf,
} from '../../../../src/actors/cluster/agreement/log.js';
import { DEFAULT_RETAIN_BYTES, DEFAULT_TIMINGS } from '../../../../src/actors/cluster/agreement/types.js';
import type { IndexedEnvelope } from '../../../../src/protocols/peer-frames.js';
import { SimNet, realEntries } from '../fixtures/sim-net.js';

const BUDGET = 64 * 1024;
const big = (n: number) => ({ type: 'Test', n, payload: 'p'.repeat(8 * 1024) }); // ~8 KiB each

t.test('with large entries the retained tail stays under the byte budget, counting only committed ones', async (t) => {
  let log = emptyLog;
  let maxRetained = 0;
  let maxInMemory = 0;
  for (let i = 1; i <= 200; i++) {
    const entry = { index: i, term: 1, event: big(i) } as unknown as IndexedEnvelope;
    log = compactLog(appendEntries(log, [entry]), i, DEFAULT_TIMINGS.retainEntries, BUDGET);
    maxRetained = Math.max(maxRetained, log.bytes);
    maxInMemory = Math.max(
      maxInMemory,
      log.store.sizes.reduce((a, b) => a + b, 0),
    );
  }
  t.ok(maxRetained <= BUDGET, `at most ${maxRetained} bytes retained (budget ${BUDGET})`);
  t.ok(maxInMemory <= BUDGET, `at most ${maxInMemory} bytes in memory, folded ones included (budget ${BUDGET})`);
  const encoded = Buffer.byteLength(JSON.stringify(entriesOf(log)));
  t.ok(encoded <= BUDGET, `the entries kept encode to ${encoded} bytes`);
  t.ok(log.count < 200 && log.count >= 5, `${log.count} of 200 entries kept`);
  t.equal(lastIndex(log), 200, 'nothing lost from the end');
  t.equal(
    log.bytes,
    sizesOf(log).reduce((a, b) => a + b, 0),
    'the total is the sum of the kept entries',
  );

  // Uncommitted entries are never folded, whatever the budget says.
  let open = emptyLog;
  for (let i = 1; i <= 20; i++)
    open = appendEntries(open, [{ index: i, term: 1, event: big(i) } as unknown as IndexedEnvelope]);
  t.equal(compactLog(open, 0, 4096, BUDGET).count, 20, 'nothing committed: all kept over budget');
  t.equal(compactLog(open, 5, 4096, BUDGET).base, 5, 'folded up to the commit index only');
  t.ok(DEFAULT_RETAIN_BYTES >= 16 * 1024 * 1024 && DEFAULT_RETAIN_BYTES <= 32 * 1024 * 1024, 'default 16–32 MiB');
});

t.test('a follower behind by more than the byte budget catches up by snapshot and agrees', async (t) => {
  const net = new SimNet();
  for (const [i, id] of ['a', 'b', 'c'].entries())
    net.add(id, i + 1).cfg = { ...net.nodes.get(id)!.cfg, retainBytes: BUDGET };
  net.mesh();
  net.run(1500);
  t.same(net.leaders(), ['a']);
  net.propose([big(0)]);
  net.run(300);
  // c hears heartbeats but no appends: it falls behind by ~40 large entries (~320 KiB, 5× the budget).
  net.filter = (_from, to, f) => !(to === 'c' && f.type === 'append');
  for (let i = 1; i <= 40; i++) net.propose([big(i)]);
  net.run(300);
  const leaderLog = net.nodes.get('a')!.state.log;
  t.ok(leaderLog.bytes <= BUDGET, `the leader retains ${leaderLog.bytes} bytes, within the budget`);
  t.ok(leaderLog.base > lastIndex(net.nodes.get('c')!.state.log), 'what c needs next was folded away');
  let snapshots = 0;
  net.filter = (_from, to, f) => {
    if (to === 'c' && f.type === 'snapshot') snapshots += 1;
    return true;
  };
  net.run(3000);
  t.ok(snapshots >= 1, `c was sent a snapshot (${snapshots})`);
  const events = (id: string) => realEntries(net.nodes.get(id)!).map((e) => e.event);
  t.same(events('c'), events('a'), 'c agrees with the leader');
  t.same(events('b'), events('a'), 'and b');
  t.equal(events('a').length, 41, 'every proposed entry applied');
  net.propose([big(41)]);
  net.run(500);
  t.same(events('c'), events('a'), 'and keeps up afterwards');
});
