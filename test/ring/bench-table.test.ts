/** The benchmark's pure parts: nccl-tests formulas, sweep sizes, table layout, CLI flags, report ratios. */
import t from 'tap';
import { parseBenchRingArgs, parseSize } from '../../src/cli/bench-ring.js';
import { formatReport } from '../../src/bench/ring/report.js';
import type { RingBenchResult } from '../../src/bench/ring/run-bench.js';
import { averageBusbw, busFactor, formatTable, makeRow, sweepSizes } from '../../src/bench/ring/table.js';

t.test('busbw factors follow nccl-tests', async (t) => {
  t.equal(busFactor('all_reduce', 4), 1.5);
  t.equal(busFactor('all_reduce', 2), 1);
  t.equal(busFactor('all_gather', 4), 0.75);
  t.equal(busFactor('broadcast', 4), 1);
  t.equal(busFactor('sendrecv', 8), 1);
  const row = makeRow('all_reduce', 4, {
    bytes: 8e6,
    count: 2e6,
    type: 'float32',
    redop: 'sum',
    root: -1,
    timeUs: 1000,
    medianUs: 900,
    wrong: 0,
  });
  t.equal(row.algbw, 8);
  t.equal(row.busbw, 12);
});

t.test('sweep sizes: -b 8 -e 256M -f 2', async (t) => {
  const sizes = sweepSizes(8, 256 * 1024 * 1024, 2);
  t.equal(sizes[0], 8);
  t.equal(sizes.at(-1), 256 * 1024 * 1024);
  t.equal(sizes.length, 26);
  t.same(sweepSizes(1, 3, 1.1), [1, 2, 3], 'always advances');
});

t.test('table layout and Avg bus bandwidth', async (t) => {
  const rows = [
    makeRow('all_gather', 2, {
      bytes: 1024,
      count: 128,
      type: 'float32',
      redop: 'none',
      root: -1,
      timeUs: 10,
      medianUs: 9,
      wrong: 0,
    }),
    makeRow('all_gather', 2, {
      bytes: 2048,
      count: 256,
      type: 'float32',
      redop: 'none',
      root: -1,
      timeUs: 10,
      medianUs: 9,
      wrong: 3,
    }),
  ];
  const text = formatTable('all_gather', rows, 'test');
  t.match(text, /#\s+size\s+count\s+type\s+redop\s+root\s+time\s+algbw\s+busbw\s+#wrong\s+median/);
  t.match(text, /\n\s+1024\s+128\s+float32\s+none\s+-1\s+10\.0\s+0\.102\s+0\.051\s+0\s+9\.0/);
  t.match(text, /Out of bounds values : 3 FAILED/);
  t.match(text, /Avg bus bandwidth\s+: 0\.077 GB\/s/);
  t.equal(Number(averageBusbw(rows).toFixed(4)), 0.0768);
});

t.test('CLI flags', async (t) => {
  t.equal(parseSize('256M'), 256 * 1024 * 1024);
  t.equal(parseSize('8'), 8);
  t.equal(parseSize('64KiB'), 65536);
  t.throws(() => parseSize('lots'));
  const o = parseBenchRingArgs([
    '--mode',
    'loopback',
    '-g',
    '3',
    '-b',
    '8',
    '-e',
    '1M',
    '-f',
    '4',
    '-n',
    '7',
    '-w',
    '2',
    '-c',
    '0',
    '-d',
    'float16',
    '-o',
    'max',
    '--ops',
    'all-reduce,send-recv',
    '--directions',
    'compare',
    '--over',
    'both',
    '--rate',
    '1gbit',
    '--json',
  ]);
  t.match(o, {
    mode: 'loopback',
    ranks: 3,
    minBytes: 8,
    maxBytes: 1 << 20,
    factor: 4,
    iters: 7,
    warmup: 2,
    check: false,
    dtype: 'float16',
    redop: 'max',
    ops: ['all_reduce', 'sendrecv'],
    directions: ['one', 'both'],
    over: ['p2p', 'lan'],
    linkRate: '1gbit',
    json: true,
  });
  const quick = parseBenchRingArgs(['--quick', '--mode', 'loopback']);
  t.match(quick, { ops: ['all_reduce'], maxBytes: 8 << 20, iters: 5, capacitySeconds: 1 });
  t.throws(() => parseBenchRingArgs(['--ops', 'all-to-all']));
  t.throws(() => parseBenchRingArgs(['-g', '1']));
  t.throws(() => parseBenchRingArgs(['--bogus']));
});

t.test('report: ratios against capacity and the p2p vs LAN line', async (t) => {
  const row = (busbw: number) =>
    makeRow('all_reduce', 4, {
      bytes: 8 << 20,
      count: 2 << 20,
      type: 'float32',
      redop: 'sum',
      root: -1,
      timeUs: (8 << 20) / (busbw / 1.5) / 1e3,
      medianUs: 1,
      wrong: 0,
    });
  const result: RingBenchResult = {
    ranks: 4,
    mode: 'lab',
    linkRate: '1gbit',
    lanRate: '1gbit',
    machine: { cpus: 2, loadBefore: 9, loadAfter: 8 },
    capacity: {
      p2p: { iperfOneWay: 1e9, iperfBidir: 2e9, nodeStream: 0.9e9 },
      lan: { iperfOneWay: 1e9, iperfBidir: 1.9e9, nodeStream: null },
    },
    runs: [
      {
        label: 'p2p ring, both directions',
        over: 'p2p',
        bidirectional: true,
        rows: [row(0.2)],
        avgBusbw: 0.2,
        errors: [],
        kernel: 'wasm',
      },
      {
        label: 'lan ring, both directions',
        over: 'lan',
        bidirectional: true,
        rows: [row(0.1)],
        avgBusbw: 0.1,
        errors: [],
        kernel: 'wasm',
      },
    ],
  };
  const text = formatReport(result);
  t.match(
    text,
    /p2p ring, both directions: all_reduce large-message busbw 1\.60 Gbit\/s = 1\.60× iperf3 one-way, 0\.80× iperf3 --bidir/,
  );
  t.match(text, /link choice: .* 1\.60 Gbit\/s vs 0\.80 Gbit\/s → 2\.00×/);
  t.match(text, /capacity lan .* one Node TCP stream n\/a/);
  t.match(text, /machine: 2 vCPUs, load average 9\.0 → 8\.0 \(shared and busy/);
});

t.test(
  'report: the one-stream baseline is the better of the two probes; CPU use and the CPU-bound ceiling',
  async (t) => {
    // 2 ranks, 16 MiB at 8 Gbit/s busbw: 16.8 ms per op; 12.6 ms CPU per op = 75 % busy.
    const bytes = 16 << 20;
    const timeUs = (bytes / 1e9 / 1) * 1e6; // busbw 1 GB/s = 8 Gbit/s (factor 1 for 2 ranks)
    const row = makeRow('all_reduce', 2, {
      bytes,
      count: bytes / 4,
      type: 'float32',
      redop: 'sum',
      root: -1,
      timeUs,
      medianUs: timeUs,
      wrong: 0,
      cpuUs: timeUs * 0.75,
      runWaitUs: timeUs * 0.2,
    });
    const result: RingBenchResult = {
      ranks: 2,
      mode: 'lab',
      linkRate: null,
      lanRate: null,
      machine: { cpus: 2, loadBefore: 1, loadAfter: 1 },
      capacity: {
        p2p: {
          iperfOneWay: 20e9,
          iperfBidir: 20e9,
          nodeStream: 10e9,
          nodeStreamAfter: 16e9,
          nodeStreamCpu: { sourceUsPerMiB: 200, sinkUsPerMiB: 300 },
          streamRing: { hosts: 2, meanBitsPerSecond: 10e9, minBitsPerSecond: 9e9, cpuUsPerMiB: 260 },
        },
      },
      runs: [
        {
          label: 'p2p ring, one direction',
          over: 'p2p',
          bidirectional: false,
          rows: [row],
          avgBusbw: 1,
          errors: [],
          kernel: 'wasm',
        },
      ],
    };
    const text = formatReport(result);
    t.match(text, /one Node TCP stream 10\.00 Gbit\/s \(again after the ring: 16\.00 Gbit\/s\)/);
    t.match(
      text,
      /busbw 8\.00 Gbit\/s = .* 0\.50× one Node stream, 0\.80× a ring of raw Node streams/,
      'judged against the better probe (16), not the worse (10)',
    );
    t.match(text, /sender 200 µs, receiver 300 µs/);
    t.match(text, /a ring of 2 raw Node streams .* 10\.00 Gbit\/s per direction \(slowest 9\.00 Gbit\/s\), 260 µs CPU/);
    // 0.75 × 16.78 ms CPU per 16 MiB of busbw → 786 µs per MiB → a whole core: 8 Mbit / 786 µs = 10.67 Gbit/s
    // = 0.67× the better stream probe (16); zero engine cost: 8 Mbit / (200 + 300) µs = 16.78 Gbit/s = 1.05×.
    t.match(text, /ranks on CPU 75 % of the op time, runnable but waiting for a CPU 20 %; 786 µs CPU per MiB of busbw/);
    t.match(
      text,
      /CPU-bound ceiling with a whole core per rank: this engine 10\.67 Gbit\/s = 0\.67× one Node stream; a ring with zero engine cost \(pays the stream's 500 µs send \+ receive per MiB\) 16\.78 Gbit\/s = 1\.05×/,
    );
    const four = formatReport({
      ...result,
      ranks: 4,
      runs: [{ ...result.runs[0]!, rows: [makeRow('all_reduce', 4, { ...row })] }],
    });
    t.match(
      four,
      /CPU-bound ceiling with 0\.50 of a core per rank \(4 ranks on 2 vCPUs\): this engine .* a ring with zero engine cost .* 8\.39 Gbit\/s = 0\.52×/,
    );
  },
);

t.test('report: torch Gloo side by side (ratio per size, ≥ 8 MiB summary) or the missing package named', async (t) => {
  const mk = (bytes: number, busbw: number) =>
    makeRow('all_reduce', 4, {
      bytes,
      count: bytes / 4,
      type: 'float32',
      redop: 'sum',
      root: -1,
      timeUs: bytes / (busbw / 1.5) / 1e3,
      medianUs: 1,
      wrong: 0,
    });
  const base: RingBenchResult = {
    ranks: 4,
    mode: 'lab',
    linkRate: '5gbit',
    lanRate: '1gbit',
    machine: { cpus: 2, loadBefore: 3, loadAfter: 3 },
    capacity: {},
    runs: [
      {
        label: 'p2p ring, both directions (auto)',
        over: 'p2p',
        bidirectional: true,
        rows: [mk(1 << 20, 0.2), mk(8 << 20, 0.4)],
        avgBusbw: 0.3,
        errors: [],
        kernel: 'wasm',
      },
      {
        label: 'lan ring, one direction (auto)',
        over: 'lan',
        bidirectional: false,
        rows: [mk(1 << 20, 0.1), mk(8 << 20, 0.12)],
        avgBusbw: 0.11,
        errors: [],
        kernel: 'wasm',
      },
    ],
  };
  const text = formatReport({
    ...base,
    gloo: {
      ok: true,
      python: '/usr/bin/python3',
      torch: '1.13.0',
      iface: 'lan0',
      rows: [
        { bytes: 1 << 20, timeUs: 1, medianUs: 1, p99Us: 2, busbw: 0.1 },
        { bytes: 8 << 20, timeUs: 1, medianUs: 1, p99Us: 2, busbw: 0.12 },
      ],
    },
  });
  t.match(text, /torch Gloo all_reduce \(torch 1\.13\.0, \/usr\/bin\/python3; GLOO_SOCKET_IFNAME=lan0/);
  t.match(
    text,
    /\n\s+1048576\s+0\.100\s+0\.200\s+\(2\.00×\)\s+0\.100\s+\(1\.00×\)/,
    'per size: Gloo busbw, then each run and its ratio',
  );
  t.match(text, /\n\s+8388608\s+0\.120\s+0\.400\s+\(3\.33×\)\s+0\.120\s+\(1\.00×\)/);
  t.match(
    text,
    /p2p ring, both directions \(auto\): all_reduce ≥ 8 MiB busbw 3\.20 Gbit\/s = 3\.33× torch Gloo \(0\.96 Gbit\/s\)/,
  );
  t.match(
    formatReport({
      ...base,
      gloo: {
        ok: false,
        reason: 'torch Gloo comparison skipped: python3-torch is not installed (Debian: apt-get install python3-torch)',
      },
    }),
    /python3-torch is not installed/,
  );
  t.notMatch(formatReport(base), /Gloo/, 'nothing when the comparison was not asked for');
  t.match(parseBenchRingArgs(['--mode', 'loopback']), { directions: ['auto'], gloo: true });
  t.match(parseBenchRingArgs(['--mode', 'loopback', '--no-gloo']), { gloo: false });
});
