import t from 'tap';
import { chainRole } from '../../src/ring/algorithms.js';
import { chunkBytesFor, chunksOf, planLanes, segmentsOf, splitEven, useBothDirections } from '../../src/ring/layout.js';

t.test('splitEven and segmentsOf cover every element exactly once', async (t) => {
  for (const count of [0, 1, 2, 3, 7, 10, 1000, 1001]) {
    for (const parts of [1, 2, 3, 4, 5]) {
      const spans = splitEven(5, count, parts);
      t.equal(
        spans.reduce((s, x) => s + x.count, 0),
        count,
      );
      t.equal(spans[0]?.start, 5);
      const segs = segmentsOf({ start: 3, count }, parts);
      t.equal(segs.length, parts);
      let at = 3;
      for (const seg of segs) {
        t.equal(seg.start, at);
        at += seg.count;
      }
      t.equal(at, 3 + count);
    }
  }
  t.same(
    segmentsOf({ start: 0, count: 1 }, 4).map((s) => s.count),
    [1, 0, 0, 0],
    'fewer elements than ranks',
  );
  t.same(chunksOf({ start: 10, count: 5 }, 2), [
    { start: 10, count: 2 },
    { start: 12, count: 2 },
    { start: 14, count: 1 },
  ]);
  t.same(chunksOf({ start: 0, count: 0 }, 2), []);
});

t.test('planLanes: both directions per connection, only when each lane has enough data', async (t) => {
  t.same(planLanes(100, 4, 1, true, 16384), [{ connection: 0, dir: 1 }]);
  t.same(planLanes(4 * 2 * 16384, 4, 1, true, 16384), [
    { connection: 0, dir: 1 },
    { connection: 0, dir: -1 },
  ]);
  t.equal(planLanes(1 << 30, 4, 2, true, 16384).length, 4);
  t.same(planLanes(1 << 30, 4, 2, false, 16384), [
    { connection: 0, dir: 1 },
    { connection: 1, dir: 1 },
  ]);
});

t.test('chainRole: a chain of `hops` ranks after the root, in either direction', async (t) => {
  const roles = (dir: 1 | -1, hops: number) =>
    [0, 1, 2, 3, 4]
      .map((r) => {
        const x = chainRole(r, 5, 1, dir, hops);
        return `${x.receives ? 'R' : '-'}${x.sends ? 'S' : '-'}`;
      })
      .join(' ');
  t.equal(roles(1, 4), 'R- -S RS RS RS');
  t.equal(roles(-1, 4), 'RS -S R- RS RS');
  t.equal(roles(1, 2), '-- -S RS R- --');
  t.equal(roles(-1, 2), 'RS -S -- -- R-');
});

t.test('chunkBytesFor: an eighth of the segment within [min, max]; both directions only beyond 2 ranks', async (t) => {
  const KiB = 1024;
  t.equal(chunkBytesFor(100, 256 * KiB, 2048 * KiB), 256 * KiB, 'small segments: the minimum');
  t.equal(chunkBytesFor(8 * 1024 * KiB, 256 * KiB, 2048 * KiB), 1024 * KiB, 'segment / 8');
  t.equal(chunkBytesFor(64 * 1024 * KiB, 256 * KiB, 2048 * KiB), 2048 * KiB, 'capped at the maximum');
  t.equal(chunkBytesFor(64 * 1024 * KiB, 4096 * KiB, 2048 * KiB), 4096 * KiB, 'a minimum above the maximum wins');
  t.equal(chunkBytesFor(801, 64, 1000), 101);
  t.equal(useBothDirections(true, 2), false, 'two ranks: one direction already uses both ways of the link');
  t.equal(useBothDirections(true, 3), true);
  t.equal(useBothDirections(false, 4), false);
});
