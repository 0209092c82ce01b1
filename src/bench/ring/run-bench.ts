/**
 * The ring benchmark orchestrator: builds the network (lab namespaces or loopback), runs one rank
 * per host as a child process for each (address set × direction) variant, aggregates the ranks'
 * rows the nccl-tests way and measures the links' capacity beside them.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { TorusError } from '../../protocols/errors.js';
import { Lab } from '../../lab/index.js';
import { DTYPE_BYTES, type Dtype, type ReduceOp } from '../../native/kernels/index.js';
import type { RingHost } from '../../ring/peer-links.js';
import { measureCapacity, measureStreamRing, nodeStream, type Capacity, type Spawner } from './capacity.js';
import { loopbackLauncher, processLauncher, type RankLauncher, type RankMessage } from './launch.js';
import type { RankJob } from './rank-main.js';
import type { RankResult, SweepConfig } from './sweep.js';
import { runGlooAllReduce, type GlooResult } from './gloo.js';
import { makeRow, sweepSizes, averageBusbw, type BenchOp, type BenchRow } from './table.js';

export type Over = 'p2p' | 'lan' | 'loopback';

export interface RingBenchOptions {
  readonly mode: 'lab' | 'loopback';
  readonly ranks: number;
  readonly ops: readonly BenchOp[];
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly factor: number;
  readonly warmup: number;
  readonly iters: number;
  readonly check: boolean;
  readonly dtype: Dtype;
  readonly redop: ReduceOp;
  readonly root: number;
  /** Lab: ring over the thunderbolt-labelled point-to-point links, over the LAN, or both (the comparison). */
  readonly over: readonly ('p2p' | 'lan')[];
  /** 'both' = both ring directions at once, 'one' = a one-direction ring, 'auto' = the engine's choice from the interfaces. */
  readonly directions: readonly ('both' | 'one' | 'auto')[];
  /** tbf rate on the point-to-point links (e.g. '1gbit'); undefined = unshaped. */
  readonly linkRate?: string;
  readonly lanRate?: string;
  readonly connections: number;
  readonly chunkBytes?: number;
  readonly smallMessageBytes?: number;
  readonly timeoutMs: number;
  readonly capacity: boolean;
  readonly capacitySeconds: number;
  /** Hard stop for one variant's rank processes (a safety net: ring timeouts already end stuck ops). Default 3 h. */
  readonly deadlineMs?: number;
  /** Lab: run torch Gloo's all_reduce on the same hosts beside the ring (default true; float32 sum only). */
  readonly gloo?: boolean;
}

export interface BenchRun {
  readonly label: string;
  readonly over: Over;
  readonly bidirectional: boolean;
  readonly rows: readonly BenchRow[];
  readonly avgBusbw: number;
  readonly errors: readonly string[];
  readonly kernel: string;
}

export interface RingBenchResult {
  readonly ranks: number;
  readonly mode: RingBenchOptions['mode'];
  readonly linkRate: string | null;
  readonly lanRate: string | null;
  readonly runs: readonly BenchRun[];
  readonly capacity: Partial<Record<Over, Capacity>>;
  /** The machine while it ran: vCPUs and the 1-minute load average before and after (noise indicator). */
  readonly machine: { readonly cpus: number; readonly loadBefore: number; readonly loadAfter: number };
  /** torch Gloo's all_reduce on the same hosts over the LAN (lab mode), or why it did not run. */
  readonly gloo?: GlooResult;
}

export type Progress = (line: string) => void;

const DEADLINE_MS = 3 * 3600_000;
const PORT = 32323; // MLX's default starting port; each lab host has its own port space
const PLACEHOLDER: RingHost = { ip: '198.51.100.1', port: 0 }; // exo's placeholder for non-neighbours

export async function runRingBench(
  options: RingBenchOptions,
  progress: Progress = () => undefined,
): Promise<RingBenchResult> {
  const n = options.ranks;
  if (!Number.isInteger(n) || n < 2) throw new TorusError('TORUS_CONFIG_INVALID', 'bench ring needs at least 2 ranks');
  if (options.mode === 'lab') {
    const why = Lab.unavailableReason();
    if (why) throw new TorusError('TORUS_CONFIG_INVALID', `bench ring --mode lab: ${why} (try --mode loopback)`);
    const links = n === 2 ? [{ a: 0, b: 1 }] : Array.from({ length: n }, (_, i) => ({ a: i, b: (i + 1) % n }));
    progress(
      `building lab: ${n} hosts, p2p ring ${options.linkRate ?? 'unshaped'}, LAN ${options.lanRate ?? 'unshaped'}`,
    );
    const lab = await Lab.create({
      hosts: n,
      ...(options.lanRate ? { lanRate: options.lanRate } : {}),
      links: links.map((l) => ({
        ...l,
        label: 'thunderbolt',
        ...(options.linkRate ? { rate: options.linkRate } : {}),
      })),
    });
    try {
      const spawner: Spawner = (host, command, args) =>
        lab.spawn(host, command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      const addressOf = (over: 'p2p' | 'lan') => (from: number, to: number) =>
        over === 'p2p' ? lab.linkIp(from, to) : (lab.hosts[to]?.lanIp ?? '');
      const launcher = processLauncher(
        (rank, command, args) => spawner(rank, command, args),
        options.deadlineMs ?? DEADLINE_MS,
      );
      const result = await sweepVariants(options, options.over, addressOf, launcher, spawner, progress);
      if (options.gloo === false || !options.ops.includes('all_reduce')) return result;
      if (options.dtype !== 'float32' || options.redop !== 'sum')
        return { ...result, gloo: { ok: false, reason: 'torch Gloo comparison runs float32 sum only' } };
      // The LAN interface: the one holding the LAN address (lab.ts names it lan0).
      const lanIf =
        Object.entries(lab.hosts[0]!.interfaces).find(([, ip]) => ip === lab.hosts[0]!.lanIp)?.[0] ?? 'lan0';
      progress(`torch Gloo all_reduce on the same ${n} hosts (GLOO_SOCKET_IFNAME=${lanIf}: over the LAN)`);
      const gloo = await runGlooAllReduce(
        (host, command, args, env) => lab.spawn(host, command, args, { stdio: ['ignore', 'pipe', 'pipe'], env }),
        {
          ranks: n,
          sizes: sweepSizes(options.minBytes, options.maxBytes, options.factor).filter((b) => b >= 4),
          warmup: Math.max(1, options.warmup),
          iters: options.iters,
          masterIp: lab.hosts[0]!.lanIp,
          port: 29500,
          iface: lanIf,
          timeoutMs: options.deadlineMs ?? DEADLINE_MS,
        },
      );
      if (!gloo.ok) progress(gloo.reason);
      return { ...result, gloo, machine: { ...result.machine, loadAfter: os.loadavg()[0] ?? 0 } };
    } finally {
      await lab.teardown();
    }
  }
  const spawner: Spawner = (_host, command, args) => spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return sweepVariants(
    options,
    ['loopback'],
    () => (_from: number, to: number) => `127.0.0.${to + 1}`,
    loopbackLauncher(options.deadlineMs ?? DEADLINE_MS),
    spawner,
    progress,
  );
}

async function sweepVariants(
  options: RingBenchOptions,
  overs: readonly Over[],
  addressFor: (over: 'p2p' | 'lan') => (from: number, to: number) => string,
  launcher: RankLauncher,
  spawner: Spawner,
  progress: Progress,
): Promise<RingBenchResult> {
  const n = options.ranks;
  const loadBefore = os.loadavg()[0] ?? 0;
  const runs: BenchRun[] = [];
  const capacity: Partial<Record<Over, Capacity>> = {};
  let variant = 0;
  for (const over of overs) {
    const address = over === 'loopback' ? (_f: number, to: number) => `127.0.0.${to + 1}` : addressFor(over);
    const probing = options.capacity;
    const probePort = 5201 + variant * 10;
    if (probing) {
      progress(`capacity ${over}: iperf3 one-way, --bidir, one Node TCP stream (${options.capacitySeconds} s each)`);
      const measured = await measureCapacity(
        spawner,
        { from: 0, to: 1, toIp: address(0, 1), fromIp: address(1, 0) },
        options.capacitySeconds,
        probePort,
      );
      progress(`capacity ${over}: a ring of ${n} raw Node streams (${options.capacitySeconds} s)`);
      const portOf = (host: number) => (options.mode === 'loopback' ? probePort + 5 + host : probePort + 5);
      const streamRing = await measureStreamRing(
        spawner,
        n,
        (host) => address(host, (host - 1 + n) % n),
        options.capacitySeconds,
        portOf,
      );
      capacity[over] = { ...measured, streamRing };
    }
    for (const direction of options.directions) {
      variant++;
      const basePort =
        options.mode === 'loopback' ? 20000 + ((process.pid * 7 + variant * 97) % 30000) : PORT + variant;
      const jobs: RankJob[] = Array.from({ length: n }, (_, rank) => ({
        connect: {
          rank,
          hosts: Array.from({ length: n }, (_, j): RingHost => {
            const port = options.mode === 'loopback' ? basePort + j : basePort;
            if (j === rank) return { ip: '0.0.0.0', port };
            if (j === (rank + 1) % n || j === (rank - 1 + n) % n) return { ip: address(rank, j), port };
            return PLACEHOLDER;
          }),
          timeoutMs: options.timeoutMs,
          connectTimeoutMs: 30_000,
          bidirectional: direction === 'auto' ? 'auto' : direction === 'both',
          connections: options.connections,
          // --chunk fixes the chunk size (adaptive chunks otherwise).
          ...(options.chunkBytes ? { chunkBytes: options.chunkBytes, maxChunkBytes: options.chunkBytes } : {}),
          ...(options.smallMessageBytes !== undefined ? { smallMessageBytes: options.smallMessageBytes } : {}),
        },
        sweep: {
          ops: options.ops,
          sizes: sweepSizes(options.minBytes, options.maxBytes, options.factor),
          warmup: options.warmup,
          iters: options.iters,
          check: options.check,
          dtype: options.dtype,
          redop: options.redop,
          root: options.root,
        },
      }));
      runs.push(await runVariant(options, over, direction, jobs, launcher, progress));
    }
    const before = capacity[over];
    if (probing && before) {
      // The one-stream baseline again, after the ring ran: the ratios use the better of the two, so a
      // busy moment during one probe cannot lower the bar the ring is judged against.
      progress(`capacity ${over}: one Node TCP stream again (${options.capacitySeconds} s)`);
      const again = await nodeStream(spawner, 0, 1, address(1, 0), probePort + 8, options.capacitySeconds);
      capacity[over] = { ...before, nodeStreamAfter: again.bitsPerSecond };
    }
  }
  const machine = { cpus: os.cpus().length, loadBefore, loadAfter: os.loadavg()[0] ?? 0 };
  return {
    ranks: n,
    mode: options.mode,
    linkRate: options.linkRate ?? null,
    lanRate: options.lanRate ?? null,
    runs,
    capacity,
    machine,
  };
}

async function runVariant(
  options: RingBenchOptions,
  over: Over,
  direction: 'both' | 'one' | 'auto',
  jobs: RankJob[],
  launcher: RankLauncher,
  progress: Progress,
): Promise<BenchRun> {
  const n = jobs.length;
  let bidirectional = direction === 'both' && n > 2;
  const labelOf = (): string =>
    `${over} ring, ${bidirectional ? 'both directions' : 'one direction'}${direction === 'auto' ? ' (auto)' : ''}`;
  const perRank: RankResult[][] = jobs.map(() => []);
  const errors: string[] = [];
  let kernel = '?';
  const first = jobs[0]?.sweep;
  const total =
    options.ops.length *
    (((Array.isArray(first) ? first[0] : first) as SweepConfig | undefined) ?? { sizes: [] }).sizes.length;
  await launcher.run(jobs, (rank, message: RankMessage) => {
    if (message.type === 'row') {
      perRank[rank]?.push(message.row);
      if (rank === 0)
        progress(`${labelOf()}: ${message.row.op} ${message.row.bytes} B (${perRank[0]?.length ?? 0}/${total})`);
    } else if (message.type === 'error') errors.push(`rank ${rank}: ${message.code} ${message.message}`);
    else if (message.type === 'ready' && rank === 0) {
      kernel = message.kernel;
      if (message.bidirectional !== undefined) bidirectional = message.bidirectional;
    }
  });
  const rows: BenchRow[] = [];
  for (const [i, first] of (perRank[0] ?? []).entries()) {
    const all = perRank
      .map((results) => results[i])
      .filter((r): r is RankResult => r !== undefined && r.op === first.op && r.bytes === first.bytes);
    if (all.length !== n) continue;
    const elem = DTYPE_BYTES[options.dtype];
    const wrong = all.some((r) => r.wrong === null) ? null : all.reduce((s, r) => s + (r.wrong ?? 0), 0);
    rows.push(
      makeRow(first.op, n, {
        bytes: first.op === 'all_gather' ? first.count * elem * n : first.count * elem,
        count: first.count,
        type: options.dtype,
        redop: first.op === 'all_reduce' ? options.redop : 'none',
        root: first.op === 'broadcast' ? options.root : -1,
        timeUs: all.reduce((s, r) => s + r.meanUs, 0) / n,
        medianUs: first.medianUs,
        wrong,
        ...meanOf(all, 'cpuUs'),
        ...meanOf(all, 'runWaitUs'),
      }),
    );
  }
  return { label: labelOf(), over, bidirectional, rows, avgBusbw: averageBusbw(rows), errors, kernel };
}

/** `{ [key]: mean over ranks }` when every rank reported it, else nothing. */
function meanOf(
  all: readonly RankResult[],
  key: 'cpuUs' | 'runWaitUs',
): Partial<Record<'cpuUs' | 'runWaitUs', number>> {
  const values = all.map((r) => r[key]).filter((v): v is number => typeof v === 'number');
  return values.length === all.length && values.length > 0
    ? { [key]: values.reduce((a, b) => a + b, 0) / values.length }
    : {};
}
