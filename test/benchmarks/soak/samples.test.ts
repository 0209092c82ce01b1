/**
 * The soak benchmark's arithmetic: the slope of a series and the floor per window, which tells a heap that only
 * moves with its collections from one that leaks.
 */
import t from 'tap';
import {
  rolesOf,
  floorPerWindow,
  missingCount,
  sampleProcess,
  slopePerHour,
} from '../../../benchmarks/soak/samples.js';
import { parseMix, schedule } from '../../../benchmarks/soak/churn.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** A heap that grows by `growPerHour` under a sawtooth of 40 units: up for 4 minutes, collected back to its floor. */
const sawtooth = (growPerHour: number) =>
  Array.from({ length: 6 * 60 + 1 }, (_, i) => {
    const atMs = i * 10_000;
    return { atMs, y: 100 + (growPerHour * atMs) / HOUR + ((atMs % (4 * MIN)) / (4 * MIN)) * 40 };
  });

t.test('slopePerHour: a straight line and its degenerate cases', async (t) => {
  const line = [0, 1, 2, 3].map((m) => ({ atMs: m * MIN, y: 10 + 2 * m }));
  t.equal(Math.round(slopePerHour(line)), 120, '2 per minute is 120 per hour');
  t.ok(Number.isNaN(slopePerHour(line.slice(0, 1))), 'one point: no slope');
  t.equal(slopePerHour([line[0]!, { ...line[0]! }]), 0, 'two points at one time: 0');
  const unknownAtFirst = [{ atMs: 0, y: Number.NaN }, ...line.slice(1)];
  t.equal(Math.round(slopePerHour(unknownAtFirst)), 120, 'a sample not yet known (NaN) is left out');
});

t.test('floorPerWindow: the lowest point of each window', async (t) => {
  const floors = floorPerWindow(sawtooth(0), 5 * MIN);
  t.equal(floors.length, 13, 'an hour in 5-minute windows, and the last sample');
  t.ok(
    floors.every((p) => p.y === 100),
    'a heap that only moves with its collections has one floor',
  );
  t.same(floorPerWindow([], 5 * MIN), [], 'no points: no floors');
  t.same(floorPerWindow(sawtooth(0), 0), [], 'no window: no floors');
  t.same(
    floorPerWindow(
      [
        { atMs: 0, y: 3 },
        { atMs: 1, y: Number.NaN },
        { atMs: 2, y: 1 },
      ],
      MIN,
    ),
    [{ atMs: 2, y: 1 }],
    'a missing sample (NaN) is no floor',
  );
});

t.test('the floor slope finds a leak the sawtooth hides, and none where there is none', async (t) => {
  const flat = sawtooth(0);
  const leak = sawtooth(12);
  t.equal(Math.round(slopePerHour(floorPerWindow(flat, 5 * MIN))), 0, 'no leak: floor slope 0');
  t.equal(Math.round(slopePerHour(floorPerWindow(leak, 5 * MIN))), 12, 'a leak of 12 per hour: floor slope 12');
  // Over a part of the run that ends mid-wave, the slope of every sample follows the wave.
  const partial = flat.filter((p) => p.atMs <= 22 * MIN);
  t.ok(Math.abs(slopePerHour(partial)) > 5, 'the slope of every sample follows the wave');
  t.equal(Math.round(slopePerHour(floorPerWindow(partial, 5 * MIN))), 0, 'the floor does not');
});

t.test(
  'sampleProcess: the live heap of each thread, or its heap in use before its first full collection',
  async (t) => {
    const dir = t.testdir({ 'a.bin': 'x'.repeat(100) });
    const text = (live: string) =>
      [
        'torus_thread_heap_used_bytes{thread="main"} 1500',
        'torus_thread_heap_used_bytes{thread="topology-keeper"} 2500',
        'torus_thread_heap_total_bytes{thread="main"} 3000',
        'torus_thread_heap_total_bytes{thread="topology-keeper"} 5000',
        'torus_thread_heap_live_bytes{thread="main"} 1000',
        'torus_node_info{id="n-1",name="h0",version="0.1.0",role="leader",incarnation="1"} 1',
        'torus_thread_idle_collections_total{thread="main"} 2',
        'torus_thread_idle_collections_total{thread="topology-keeper"} 3',
        live,
      ].join('\n');
    const partial = sampleProcess(process.pid, dir, text(''));
    t.equal(partial.heapLiveBytes, 1000 + 2500, 'the keeper not yet collected counts its heap in use');
    t.same(partial.heapLiveByThread, { main: 1000 });
    const whole = sampleProcess(process.pid, dir, text('torus_thread_heap_live_bytes{thread="topology-keeper"} 2000'));
    t.equal(whole.heapLiveBytes, 3000);
    t.equal(whole.heapTotalBytes, 8000);
    t.equal(whole.dataDirBytes, 100);
    t.equal(whole.idleCollections, 5, 'idle collections, summed over threads');
    t.equal(whole.role, 'leader', 'the role, from torus_node_info');
    t.equal(rolesOf([{ role: 'follower' }, {}, { role: 'follower' }, { role: 'leader' }]), 'follower→leader');
    t.ok(whole.rssBytes > 0 && whole.fds > 0 && whole.threads > 0, 'this process, from /proc');
  },
);

t.test('a failed scrape is a missing sample: no heap figure is 0, and /proc figures are still there', async (t) => {
  const dir = t.testdir({ 'a.bin': 'x'.repeat(10) });
  const failed = sampleProcess(process.pid, dir, '', 'connect ECONNREFUSED 10.77.0.1:52515');
  t.equal(failed.metricsError, 'connect ECONNREFUSED 10.77.0.1:52515', 'the sample says why');
  for (const key of ['heapTotalBytes', 'heapLiveBytes', 'externalBytes', 'mallocedBytes', 'idleCollections'] as const)
    t.ok(Number.isNaN(failed[key]), `${key} is missing, not 0`);
  t.ok(Number.isNaN(failed.rssBytes - failed.heapTotalBytes), '"RSS outside the heaps" is missing, not RSS');
  t.ok(failed.rssBytes > 0 && failed.dataDirBytes === 10, '/proc and the data dir are sampled all the same');
  const line = JSON.parse(JSON.stringify(failed));
  t.equal(line.heapTotalBytes, null, 'the samples file writes it as null, never 0');
  t.equal(line.metricsError, failed.metricsError);
});

t.test('a thread that did not answer: its figures and every sum over threads are missing', async (t) => {
  const dir = t.testdir({});
  const text = [
    'torus_thread_heap_used_bytes{thread="main"} 1500',
    'torus_thread_heap_total_bytes{thread="main"} 3000',
    'torus_thread_external_bytes{thread="main"} 10',
    'torus_thread_metrics_answered{thread="main"} 1',
    'torus_thread_metrics_answered{thread="placement-planner"} 0',
  ].join('\n');
  const s = sampleProcess(process.pid, dir, text);
  t.same(s.threadsMissing, ['placement-planner'], 'named');
  t.equal(s.heapBytes.main, 1500, "main's own figure stands");
  t.notOk('placement-planner' in s.heapBytes, 'the silent thread has none (its row reads it as missing)');
  t.ok(Number.isNaN(s.heapTotalBytes), 'the sum over threads is missing, not the sum of those that answered');
  t.ok(Number.isNaN(s.externalBytes));
  const all = sampleProcess(process.pid, dir, text.replace('"placement-planner"} 0', '"placement-planner"} 1'));
  t.same(all.threadsMissing, []);
  t.equal(all.heapTotalBytes, 3000, 'every thread answered: the sum');
});

t.test('slopes go without missing samples, and the table counts them', async (t) => {
  const series = [0, 1, 2, 3, 4].map((m) => ({ atMs: m * MIN, y: m === 2 ? Number.NaN : 10 + 2 * m }));
  t.equal(Math.round(slopePerHour(series)), 120, 'a missing sample does not bend the slope');
  t.equal(
    missingCount(series, (p) => p.y),
    1,
    'and is counted',
  );
});

t.test('the churn mix: parsed strictly, spread out in its cycle', async (t) => {
  t.same(parseMix('place=2,ring=1'), { place: 2, ring: 1 });
  t.same(schedule({ place: 2, ring: 1, artifact: 1, job: 0 }), ['place', 'ring', 'artifact', 'place']);
  t.throws(() => parseMix('place=2,dance=1'), /--mix takes KIND=N/);
  t.throws(() => parseMix('place=0'), /at least one kind/);
  t.throws(() => parseMix('place=-1'), /--mix takes KIND=N/);
});
