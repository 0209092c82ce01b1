import t from 'tap';
import { glooColumns } from '../../../benchmarks/ring-live/columns.js';
import { glooLines } from '../../../src/bench/ring/report.js';
import type { RingBenchResult } from '../../../src/bench/ring/run-bench.js';
import { makeRow } from '../../../src/bench/ring/table.js';

// A ring over the point-to-point cables against Gloo on the LAN is two networks: every place such a ratio is
// printed names the links, so it is not read as the ring engine against Gloo on the same links.
const MiB = 2 ** 20;
const row = (bytes: number, timeUs: number) =>
  makeRow('all_reduce', 4, {
    bytes,
    count: bytes / 4,
    type: 'float32',
    redop: 'sum',
    root: -1,
    timeUs,
    medianUs: timeUs,
    wrong: 0,
  });
const run = (over: 'p2p' | 'lan', label: string) => ({
  label,
  over,
  bidirectional: over === 'p2p',
  rows: [row(8 * MiB, 20_000), row(16 * MiB, 40_000)],
  avgBusbw: 0,
  errors: [],
  kernel: 'wasm',
});
const result: RingBenchResult = {
  ranks: 4,
  mode: 'lab',
  linkRate: '4gbit',
  lanRate: '1gbit',
  runs: [run('p2p', 'p2p ring, both directions'), run('lan', 'lan ring, one direction')],
  capacity: {},
  machine: { cpus: 2, loadBefore: 1, loadAfter: 1 },
  gloo: {
    ok: true,
    python: '/usr/bin/python3',
    torch: '2.0',
    iface: 'lan0',
    rows: [
      { bytes: 8 * MiB, count: 2 * MiB, timeUs: 60_000, algbw: 0, busbw: 0.2 },
      { bytes: 16 * MiB, count: 4 * MiB, timeUs: 120_000, algbw: 0, busbw: 0.2 },
    ],
  },
} as unknown as RingBenchResult;

t.test('bench ring --over both: each ratio to Gloo says whether the links were the same', async (t) => {
  const lines = glooLines(result);
  const header = lines.find((l) => l.includes('size (B)'))!;
  t.match(header, /p2p ring, both directions \(×Gloo, different links: the ring on the p2p links, Gloo on the LAN\)/);
  t.match(header, /lan ring, one direction \(×Gloo, same links: both on the LAN\)/);
  const summary = lines.filter((l) => l.includes('≥ 8 MiB'));
  t.equal(summary.length, 2);
  t.match(
    summary[0],
    /^# p2p ring, both directions: .*torch Gloo .*; different links: the ring on the p2p links, Gloo on the LAN$/,
  );
  t.match(summary[1], /^# lan ring, one direction: .*torch Gloo .*; same links: both on the LAN$/);
});

t.test('ring-live: the cable scenario names both networks in its title and columns', async (t) => {
  const p2p = glooColumns('p2p', '4gbit', '1gbit');
  t.match(p2p.title, /ring on p2p cables at 4gbit, Gloo on the LAN at 1gbit: different links/);
  t.equal(p2p.ring, 'ring busbw Gbit/s (4gbit cables)');
  t.equal(p2p.gloo, 'gloo busbw Gbit/s (1gbit LAN)');
  t.equal(p2p.ratio, 'ring (cables) / gloo (LAN), different links');
  const lan = glooColumns('lan', '4gbit', '1gbit');
  t.equal(lan.ratio, 'ring/gloo, same links');
  t.match(lan.title, /same links/);
});
