/**
 * `torus bench ring` (lab and loopback modes): parses nccl-tests style flags, runs the ring benchmark
 * suite (src/bench/ring) and prints the nccl-tests tables, link capacity and ratios (or --json).
 * The live-cluster client is src/cli/bench-ring-live.ts (`bench ring --live`).
 */
import { parseArgs } from 'node:util';
import { asTorusError } from '../protocols/errors.js';
import { Lab } from '../lab/index.js';
import { isDtype, isReduceOp } from '../native/kernels/dtypes.js';
import { formatReport, runRingBench, type BenchOp, type RingBenchOptions } from '../bench/ring/index.js';

export const BENCH_RING_USAGE = `usage: torus bench ring [--mode lab|loopback] [-g RANKS] [-b SIZE] [-e SIZE] [-f FACTOR] [-w N] [-n N] [-c 0|1]
                        [-d float32|int32|float16] [-o sum|max|min] [-r ROOT] [--ops LIST] [--rate RATE] [--lan-rate RATE]
                        [--over p2p|lan|both] [--directions auto|both|one|compare] [--connections N] [--chunk SIZE] [--small SIZE]
                        [--no-capacity] [--no-gloo] [--capacity-seconds S] [--timeout-ms MS] [--quick] [--json]
  nccl-tests style sweep of the torus ring: one rank per lab namespace (root; p2p ring links labelled
  thunderbolt, shaped with tbf at --rate, plus a LAN bridge at --lan-rate) or per process on loopback.
  -g ranks (default 4)  -b/-e min/max bytes (8 / 64M)  -f step factor (2)  -w warmup (1)  -n iters (20)  -c check (1)
  --ops all-reduce,all-gather,broadcast,send-recv (default all)   --over both = the p2p vs LAN comparison
  --directions auto (default) = both directions over a ring of separate links, one over a shared LAN interface;
                compare = one-direction ring and both-directions ring side by side
  lab mode runs torch Gloo's all_reduce on the same hosts beside the ring when python3-torch is installed (--no-gloo: not)
  --quick: -b 8 -e 8M -f 8 -w 1 -n 5, all-reduce only, 1 s capacity probes (well under a minute)
`;

const OPS: Record<string, BenchOp> = {
  'all-reduce': 'all_reduce',
  all_reduce: 'all_reduce',
  allreduce: 'all_reduce',
  'all-gather': 'all_gather',
  all_gather: 'all_gather',
  allgather: 'all_gather',
  broadcast: 'broadcast',
  'send-recv': 'sendrecv',
  sendrecv: 'sendrecv',
  send_recv: 'sendrecv',
};

class UsageError extends Error {}

/** "8", "64K", "256M", "1G", "4MiB" → bytes (powers of 1024, like nccl-tests). */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?$/i.exec(text.trim());
  if (!m) throw new UsageError(`expected a size like 8, 64K, 256M, got ${JSON.stringify(text)}`);
  const power = ' kmgt'.indexOf((m[2] || ' ').toLowerCase());
  return Math.round(Number(m[1]) * 1024 ** power);
}

export function parseBenchRingArgs(args: string[]): RingBenchOptions & { json: boolean; help: boolean } {
  const { values: v } = parseArgs({
    args,
    allowPositionals: false,
    strict: true,
    options: {
      mode: { type: 'string' },
      ranks: { type: 'string', short: 'g' },
      'min-bytes': { type: 'string', short: 'b' },
      'max-bytes': { type: 'string', short: 'e' },
      'step-factor': { type: 'string', short: 'f' },
      warmup: { type: 'string', short: 'w' },
      iters: { type: 'string', short: 'n' },
      check: { type: 'string', short: 'c' },
      datatype: { type: 'string', short: 'd' },
      op: { type: 'string', short: 'o' },
      root: { type: 'string', short: 'r' },
      ops: { type: 'string' },
      rate: { type: 'string' },
      'lan-rate': { type: 'string' },
      over: { type: 'string' },
      directions: { type: 'string' },
      connections: { type: 'string' },
      chunk: { type: 'string' },
      small: { type: 'string' },
      'no-capacity': { type: 'boolean' },
      'no-gloo': { type: 'boolean' },
      'capacity-seconds': { type: 'string' },
      'timeout-ms': { type: 'string' },
      quick: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const int = (name: keyof typeof v, fallback: number, min = 0): number => {
    const raw = v[name];
    if (raw === undefined) return fallback;
    if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < min)
      throw new UsageError(`--${String(name)}: expected a whole number >= ${min}`);
    return Number(raw);
  };
  const quick = v.quick === true;
  const mode = v.mode ?? (Lab.available() ? 'lab' : 'loopback');
  if (mode !== 'lab' && mode !== 'loopback')
    throw new UsageError('--mode: lab or loopback (the live cluster is `bench ring --live`)');
  const dtype = v.datatype ?? 'float32';
  if (!isDtype(dtype)) throw new UsageError('-d: float32, int32 or float16');
  const redop = v.op ?? 'sum';
  if (!isReduceOp(redop)) throw new UsageError('-o: sum, max or min');
  const ops = (v.ops ?? (quick ? 'all-reduce' : 'all-reduce,all-gather,broadcast,send-recv')).split(',').map((s) => {
    const op = OPS[s.trim().toLowerCase()];
    if (!op) throw new UsageError(`--ops: unknown op ${s}`);
    return op;
  });
  const over = v.over ?? 'p2p';
  if (!['p2p', 'lan', 'both'].includes(over)) throw new UsageError('--over: p2p, lan or both');
  const directions = v.directions ?? 'auto';
  if (!['auto', 'both', 'one', 'compare'].includes(directions))
    throw new UsageError('--directions: auto, both, one or compare');
  const factor = Number(v['step-factor'] ?? (quick ? 8 : 2));
  if (!(factor > 1)) throw new UsageError('-f: a factor > 1');
  const minBytes = parseSize(v['min-bytes'] ?? '8');
  const maxBytes = parseSize(v['max-bytes'] ?? (quick ? '8M' : '64M'));
  if (maxBytes < minBytes) throw new UsageError('-e must be >= -b');
  return {
    mode,
    ranks: int('ranks', 4, 2),
    ops,
    minBytes,
    maxBytes,
    factor,
    warmup: int('warmup', 1),
    iters: int('iters', quick ? 5 : 20, 1),
    check: int('check', 1) !== 0,
    dtype,
    redop,
    root: int('root', 0),
    over: over === 'both' ? ['p2p', 'lan'] : [over as 'p2p' | 'lan'],
    directions: directions === 'compare' ? ['one', 'both'] : [directions as 'auto' | 'both' | 'one'],
    ...(v.rate ? { linkRate: v.rate } : {}),
    ...(v['lan-rate'] ? { lanRate: v['lan-rate'] } : {}),
    connections: int('connections', 1, 1),
    ...(v.chunk ? { chunkBytes: parseSize(v.chunk) } : {}),
    ...(v.small ? { smallMessageBytes: parseSize(v.small) } : {}),
    timeoutMs: int('timeout-ms', 60_000, 1),
    capacity: v['no-capacity'] !== true,
    gloo: v['no-gloo'] !== true,
    capacitySeconds: int('capacity-seconds', quick ? 1 : 3, 1),
    json: v.json === true,
    help: v.help === true,
  };
}

export async function runBenchRingCommand(args: string[]): Promise<number> {
  let options: ReturnType<typeof parseBenchRingArgs>;
  try {
    options = parseBenchRingArgs(args);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${BENCH_RING_USAGE}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(BENCH_RING_USAGE);
    return 0;
  }
  const tty = process.stderr.isTTY === true;
  const progress = (line: string) =>
    process.stderr.write(tty ? `\r\x1b[K[bench ring] ${line}` : `[bench ring] ${line}\n`);
  try {
    const result = await runRingBench(options, progress);
    if (tty) process.stderr.write('\n');
    process.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : `${formatReport(result)}\n`);
    const failed = result.runs.some((r) => r.errors.length > 0 || r.rows.some((row) => (row.wrong ?? 0) > 0));
    return failed ? 1 : 0;
  } catch (error) {
    const e = asTorusError(error);
    if (tty) process.stderr.write('\n');
    process.stderr.write(
      options.json ? `${JSON.stringify({ error: e.toJSON() })}\n` : `error: ${e.message} (${e.code})\n`,
    );
    return 1;
  }
}
