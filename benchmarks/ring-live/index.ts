/**
 * The ring benchmark through the live path: a 4-node lab cluster of real nodes (src/lab/node-cluster.ts,
 * one cluster secret, `--allow-exec=python3` so the Gloo job may run), then `bench ring --live --gloo` run inside
 * host 0's namespace: POST /v1/bench/ring with the Gloo comparison, the ring's all-reduce and torch Gloo's
 * all_reduce on the same nodes at 8–32 MiB, 10 timed iterations. Prints size, ring busbw, Gloo busbw and ring ÷
 * Gloo per size, with the load average.
 *   LAN: 4 hosts on one switch, ports shaped to --lan-rate (default 1gbit).
 *   ring (--over p2p|both): 4 hosts in a thunderbolt-style ring of point-to-point links shaped to --rate (default
 *     4gbit) beside the LAN; the ring runs over the cables, Gloo binds to the planned interface.
 *   node build/benchmarks/ring-live/index.js [--quick] [--json] [--over lan|p2p|both] [--rate R] [--lan-rate R]
 * Needs root (namespaces) and /usr/bin/python3 with torch (Debian python3-torch); says so and exits 0 otherwise.
 * Speeds are not asserted: read the ratios next to the load average.
 */
import { loadavg } from 'node:os';
import { BenchOwner, Lab, NodeCluster, nodeUnavailableReason, profiled, type NodeView } from '../../src/lab/index.js';
import { findTorchPython } from '../../src/bench/ring/gloo.js';
import { glooColumns } from './columns.js';
import { printTable, type BenchRow } from '../table.js';
import { args, flag } from '../args.js';

const json = args.includes('--json');
const quick = args.includes('--quick');
const lanRate = flag('--lan-rate') ?? '1gbit';
const ringRate = flag('--rate') ?? '4gbit';
const over = flag('--over') ?? 'lan';
const HOSTS = 4;
const PYTHON = '/usr/bin/python3';
const benchArgs = [
  'bench',
  'ring',
  '--live',
  '--gloo',
  '--gloo-python',
  PYTHON,
  '--json',
  '--ops',
  'all-reduce',
  '-b',
  '8M',
  '-e',
  quick ? '8M' : '32M',
  '-f',
  '2',
  '-n',
  quick ? '3' : '10',
  '-w',
  '1',
];

interface GlooRows {
  readonly ok: boolean;
  readonly reason?: string;
  readonly rows?: readonly { bytes: number; busbw: number }[];
}
interface LiveOutput {
  readonly status: string;
  readonly error?: { message: string };
  readonly result?: { ring?: string[]; rows?: { op: string; size: number; busbw: number }[]; gloo?: GlooRows };
  readonly gloo?: GlooRows;
}

/**
 * With cables, every neighbour pair has two addresses (LAN and cable), so `profiled`'s one link per pair does not
 * hold: wait for every LAN and cable link, both ways, measured, and every cable faster than every LAN link (else
 * the planner rightly keeps the ring on the LAN).
 */
const cablesReady =
  (cables: number) =>
  (vs: NodeView[]): boolean =>
    vs.every((v) => {
      const bw = (type: string) => v.topology.links.filter((l) => l.type === type).map((l) => l.bandwidthBps ?? 0);
      return (
        v.topology.nodes.length === HOSTS &&
        v.topology.nodes.every((n) => n.memory) &&
        v.topology.links.length === HOSTS * (HOSTS - 1) + 2 * cables &&
        v.topology.links.every((l) => typeof l.bandwidthBps === 'number') &&
        Math.min(...bw('thunderbolt')) > Math.max(...bw('ethernet'))
      );
    });

const progress = (line: string): void => void process.stderr.write(`[ring-live] ${line}\n`);

async function scenario(name: 'lan' | 'p2p'): Promise<void> {
  const owner = new BenchOwner();
  const links =
    name === 'p2p'
      ? Array.from({ length: HOSTS }, (_, a) => ({ a, b: (a + 1) % HOSTS, rate: ringRate, label: 'thunderbolt' }))
      : [];
  const load0 = loadavg()[0]!;
  try {
    progress(
      `${name}: building a ${HOSTS}-host lab (LAN ${lanRate}${name === 'p2p' ? `, ring of p2p links at ${ringRate}` : ''}) and starting the nodes`,
    );
    const lab = await Lab.create({ hosts: HOSTS, lanRate, links });
    const p2pTypes = (h: number): string[] =>
      links
        .filter((l) => l.a === h || l.b === h)
        .flatMap((l) => ['--iface-type', `${lab.ifName(h, l.a === h ? l.b : l.a)}=thunderbolt`]);
    const c = await NodeCluster.start(owner, lab, {
      nodeArgs: (h) => ['--allow-exec=python3', '--iface-type', 'lan0=ethernet', ...p2pTypes(h)],
    });
    const started = Date.now();
    await c.converged(180_000, links.length ? cablesReady(links.length) : profiled);
    progress(
      `${name}: ${HOSTS} nodes agreed and profiled in ${((Date.now() - started) / 1000).toFixed(0)} s; bench ${benchArgs.slice(1).join(' ')}`,
    );
    const run = await c.cli(0, benchArgs, 900_000);
    if (run.code !== 0) throw new Error(`bench exited ${run.code}: ${run.stderr.slice(-600)}`);
    const out = JSON.parse(run.stdout) as LiveOutput;
    const gloo = out.result?.gloo ?? out.gloo;
    const byBytes = new Map((gloo?.rows ?? []).map((r) => [r.bytes, r.busbw]));
    const gbit = (gbytesPerSecond: number | undefined): number | null =>
      gbytesPerSecond === undefined ? null : +(gbytesPerSecond * 8).toFixed(3);
    const columns = glooColumns(name, ringRate, lanRate);
    const rows: BenchRow[] = (out.result?.rows ?? [])
      .filter((r) => r.op === 'all-reduce')
      .map((r) => {
        const g = byBytes.get(r.size);
        return {
          size: `${r.size / 2 ** 20} MiB`,
          [columns.ring]: gbit(r.busbw),
          [columns.gloo]: gbit(g),
          [columns.ratio]: g ? +(r.busbw / g).toFixed(2) : null,
        };
      });
    const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
    const ratios = rows.map((r) => r[columns.ratio]).filter((x): x is number => typeof x === 'number');
    const target = name === 'lan' ? '≥ 0.97×' : '≥ 3×';
    const note = [
      `ring over ${out.result?.ring?.length ?? '?'} nodes; mean ${columns.ratio} ${ratios.length ? mean(ratios).toFixed(2) : 'n/a'}× (target ${target})`,
      gloo && !gloo.ok ? `torch Gloo: ${gloo.reason}` : '',
      `load average at the start ${load0.toFixed(2)} (at the end: below)`,
    ]
      .filter(Boolean)
      .join('\n');
    printTable(
      `ring vs torch Gloo all_reduce through POST /v1/bench/ring, ${HOSTS} nodes, ${columns.title}`,
      rows,
      json,
      note,
    );
  } catch (error) {
    owner.ok = false;
    throw error;
  } finally {
    await owner.close();
  }
}

async function main(): Promise<void> {
  const why =
    Lab.unavailableReason() ??
    nodeUnavailableReason() ??
    (findTorchPython([PYTHON]) ? undefined : `${PYTHON} cannot import torch (Debian: apt-get install python3-torch)`);
  if (why) {
    process.stderr.write(`ring-live benchmark skipped: ${why}\n`);
    return;
  }
  if (!['lan', 'p2p', 'both'].includes(over)) throw new Error(`--over: expected lan, p2p or both, got ${over}`);
  for (const name of over === 'both' ? (['lan', 'p2p'] as const) : [over as 'lan' | 'p2p']) await scenario(name);
}

await main().catch((error: unknown) => {
  process.stderr.write(`ring-live benchmark failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
