/** The ordered buffer and the log: in order, out of order, gaps, duplicates (same and different payloads), stale. */
import t from 'tap';
import {
  drain,
  emptyBuffer,
  firstPending,
  ingest,
  skipTo,
} from '../../../../src/actors/cluster/agreement/ordered-buffer.js';
import {
  appendEntries,
  compactLog,
  emptyLog,
  hashAt,
  lastHash,
  lastIndex,
  lastTerm,
  sliceLog,
} from '../../../../src/actors/cluster/agreement/log.js';
import type { IndexedEnvelope } from '../../../../src/protocols/peer-frames.js';

const e = (index: number, n = index, term = 1): IndexedEnvelope => ({ index, term, event: { type: 'T', n } });

t.test('in order and out of order release strictly consecutively', async (t) => {
  let b = emptyBuffer(1);
  for (const i of [3, 1, 2, 5]) b = ingest(b, e(i), 100).buffer;
  const r = drain(b);
  t.same(
    r.ready.map((x) => x.index),
    [1, 2, 3],
    '5 waits for 4',
  );
  t.equal(r.buffer.next, 4);
  t.equal(firstPending(r.buffer), 5, 'the gap ends before 5');
  const r2 = drain(ingest(r.buffer, e(4), 100).buffer);
  t.same(
    r2.ready.map((x) => x.index),
    [4, 5],
  );
  t.equal(firstPending(r2.buffer), undefined);
});

t.test('duplicates, conflicting duplicates, stale, too far ahead', async (t) => {
  let b = ingest(emptyBuffer(5), e(7), 4).buffer;
  t.equal(ingest(b, e(7), 4).outcome, 'duplicate');
  t.equal(ingest(b, e(7, 99), 4).outcome, 'conflict');
  t.equal(drain(ingest(b, e(7, 99), 4).buffer).buffer.pending.get(7)?.event.n, 7, 'the first payload is kept');
  t.equal(ingest(b, e(4), 4).outcome, 'stale');
  t.equal(ingest(b, e(9), 4).outcome, 'full', 'beyond next + maxPending');
  b = skipTo(b, 8);
  t.equal(b.pending.size, 0, 'skipTo drops what a snapshot covers');
});

t.test('log: compaction only of committed entries, slices, chain hashes', async (t) => {
  let log = appendEntries(emptyLog, [e(1), e(2), e(3)]);
  t.equal(compactLog(log, 0, 2), log, 'nothing committed: nothing folded away, whatever the window');
  log = compactLog(log, 3, 2);
  t.equal(lastIndex(log), 3);
  t.equal(log.base, 1, 'one committed entry folded into the snapshot (window of 2)');
  t.equal(sliceLog(log, 1, 3), null, 'compacted: answer with a snapshot');
  t.same(
    sliceLog(log, 2, 9)!.map((x) => x.index),
    [2, 3],
  );
  t.equal(hashAt(log, 1), log.baseHash);
  const other = appendEntries(emptyLog, [e(1), e(2, 20), e(3)]);
  t.not(lastHash(other), lastHash(log), 'a different entry 2 changes every later hash');
  t.equal(hashAt(other, 1), hashAt(appendEntries(emptyLog, [e(1)]), 1));
  log = appendEntries(log, [e(4, 4, 2)]);
  t.equal(lastTerm(log), 2);
  t.equal(compactLog(log, 2, 1).base, 2, 'never past the commit index, even when the window would allow it');
});
