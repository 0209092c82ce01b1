/**
 * Where a model start's time goes, per placed node (docs/artifacts.md, "Benchmark: model start"): the instance
 * committed (POST answered), the node's stage transfer started (the gate asked for it: the first chunk requests
 * follow at once), the transfer ended (every chunk of the stage durable), the runner started (its marker), the
 * bytes it took from each source, and the CPU seconds each node's process used over the run (/proc/<pid>/stat
 * utime + stime: every thread of the node, not its runners).
 */
import { readFileSync } from 'node:fs';
import type { NodeProcess } from '../../src/lab/index.js';
import type { BenchRow } from '../table.js';

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on every Linux this runs on). */
const USER_HZ = 100;

/** CPU seconds (user + system, all threads) process `pid` has used so far; undefined when it is gone. */
export function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, inside parentheses): state is field 3, utime 14, stime 15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / USER_HZ;
  } catch {
    return undefined;
  }
}

/** Every live node's CPU seconds so far, by node id. */
export function clusterCpu(nodes: readonly NodeProcess[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const n of nodes) {
    const s = n.alive ? processCpuSeconds(n.proc?.pid) : undefined;
    if (s !== undefined) out.set(n.id, s);
  }
  return out;
}

export interface NodePhases {
  readonly node: string;
  /** -1: a node outside the placement (only its CPU is known) */
  readonly rank: number;
  /** ms since the POST, each; undefined: not seen (a node that fetched nothing has no transfer) */
  readonly transferStart?: number;
  readonly transferEnd?: number;
  readonly runnerStart?: number;
  /** bytes received from each source node, by node id */
  readonly bySource: Readonly<Record<string, number>>;
  readonly cpuSeconds?: number;
}

export interface RunPhases {
  /** ms from the POST to its answer (the instance committed) */
  readonly committed: number;
  readonly nodes: readonly NodePhases[];
  /** CPU seconds every node process used over the run, together */
  readonly cpuSeconds: number;
  readonly wallSeconds: number;
}

interface TransferView {
  id: string;
  startedAt: number;
  endedAt?: number;
  bySource?: Record<string, { bytes: number }>;
}

/** The phases of one run: `t0` the POST, `committedAt` its answer, `markers` each rank's runner start (epoch ms). */
export async function runPhases(
  nodes: readonly NodeProcess[],
  placed: readonly { node: string; rank: number }[],
  artifactId: string,
  t0: number,
  committedAt: number,
  markers: ReadonlyMap<number, { at: number }>,
  cpuBefore: ReadonlyMap<string, number>,
): Promise<RunPhases> {
  const cpuAfter = clusterCpu(nodes);
  const out: NodePhases[] = [];
  for (const p of placed) {
    const n = nodes.find((x) => x.id === p.node);
    const ts = n ? await n.tryGet<{ transfers: TransferView[] }>('/v1/artifacts/transfers') : undefined;
    const t = ts?.transfers.find((x) => x.id === artifactId && x.startedAt >= t0);
    const before = cpuBefore.get(p.node);
    const after = cpuAfter.get(p.node);
    const runner = markers.get(p.rank)?.at;
    out.push({
      node: p.node,
      rank: p.rank,
      ...(t ? { transferStart: t.startedAt - t0 } : {}),
      ...(t?.endedAt !== undefined ? { transferEnd: t.endedAt - t0 } : {}),
      ...(runner !== undefined ? { runnerStart: runner - t0 } : {}),
      bySource: Object.fromEntries(Object.entries(t?.bySource ?? {}).map(([k, v]) => [k, v.bytes])),
      ...(before !== undefined && after !== undefined ? { cpuSeconds: after - before } : {}),
    });
  }
  // The nodes outside the placement too: a holder that only sends (its serving CPU counts against the bound).
  for (const n of nodes) {
    if (placed.some((p) => p.node === n.id)) continue;
    const before = cpuBefore.get(n.id);
    const after = cpuAfter.get(n.id);
    if (before !== undefined && after !== undefined)
      out.push({ node: n.id, rank: -1, bySource: {}, cpuSeconds: after - before });
  }
  let cpu = 0;
  for (const [id, after] of cpuAfter) cpu += after - (cpuBefore.get(id) ?? after);
  const last = Math.max(0, ...out.map((x) => x.runnerStart ?? 0));
  return { committed: committedAt - t0, nodes: out, cpuSeconds: cpu, wallSeconds: last / 1000 };
}

const s = (ms: number | undefined): number | null => (ms === undefined ? null : +(ms / 1000).toFixed(2));
const MiB = 2 ** 20;

/** One row per placed node: the phases in seconds since the POST, the bytes per source, its CPU seconds. */
export function phaseRows(name: string, p: RunPhases, names: (node: string) => string): BenchRow[] {
  return p.nodes.map((n) => ({
    case: name,
    node: names(n.node),
    rank: n.rank < 0 ? 'not placed' : n.rank,
    'committed s': s(p.committed),
    'transfer start s': s(n.transferStart),
    'stage done s': s(n.transferEnd),
    'runner start s': s(n.runnerStart),
    'done → runner s':
      n.transferEnd !== undefined && n.runnerStart !== undefined ? s(n.runnerStart - n.transferEnd) : null,
    'MiB by source':
      Object.entries(n.bySource)
        .map(([src, b]) => `${names(src)} ${(b / MiB).toFixed(1)}`)
        .join(', ') || '-',
    'CPU s': n.cpuSeconds === undefined ? null : +n.cpuSeconds.toFixed(2),
  }));
}
