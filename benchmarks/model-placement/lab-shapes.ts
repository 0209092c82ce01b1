/**
 * The lab shapes of the model-placement benchmark (docs/placement.md, "Benchmark: model placement"): which hosts
 * are cabled to which, every port's rate, and each node's memory as a share of the model's weights (`--memory-limit`).
 * This kernel has tbf but no netem: links differ in rate only, so the shapes make a network difference show in the
 * prefill (N tokens of hidden states a hop, well above the tbf bucket); a decode step's few KiB pass in the bucket.
 */
import type { Lab, NodeCluster, NodeView } from '../../src/lab/index.js';

export interface Cable {
  readonly a: number;
  readonly b: number;
}

export interface LabShape {
  readonly name: string;
  /** what the shape is built to show */
  readonly claim: string;
  readonly hosts: number;
  /** every host's LAN port unless `ports` says otherwise */
  readonly lanRate: string;
  readonly ports?: Readonly<Record<number, string>>;
  readonly cables: readonly Cable[];
  readonly cableRate: string;
  /** each host's memory limit as a share of the model's weight bytes */
  readonly memoryShare: readonly number[];
}

/**
 * Memory in both 5-host shapes: h0 and h1 hold 0.6 of the weights each, h2–h4 0.35, so the only 2-node set is
 * {h0, h1}; every 3-node set holds it in total (each stage's share is then checked per node), and so on up to 5.
 */
const MEMORY = [0.6, 0.6, 0.35, 0.35, 0.35];

/**
 * A: one switched LAN at 100 Mbit/s, no slow port (one would sit on most options: 11 of the 16 feasible sets hold
 * any given one of h2–h4). Every option's stages cost about the same compute (the same layers on the same CPUs), so
 * each extra hop is a cost of its own: the smallest set {h0, h1} is the fastest.
 */
export const SHAPE_A: LabShape = {
  name: 'A',
  claim: 'the smallest feasible set is the fastest',
  hosts: 5,
  lanRate: '100mbit',
  cables: [],
  cableRate: '1gbit',
  memoryShare: MEMORY,
};

/**
 * B: cables at 1 Gbit/s in a ring h0–h2–h1–h3–h0 beside a 100 Mbit/s LAN, h1's LAN port at 3 Mbit/s. The only
 * 2-node set {h0, h1} has no cable: its hop crosses h1's slow port. A ring over the cables (h0→h2→h1→h3) carries
 * every hidden state at 1 Gbit/s. Only options with h1 next to h0 or h4 in the ring cross the slow port.
 */
export const SHAPE_B: LabShape = {
  name: 'B',
  claim: 'the smallest feasible set is not the fastest',
  hosts: 5,
  lanRate: '100mbit',
  // 3 Mbit/s: a prefill's hop over it costs more than the compute beside it even on a loaded machine (at 10 Mbit/s
  // the two were close); it forms since the stream prober rates a slow link's late bytes (docs/profiler.md).
  ports: { 1: '3mbit' },
  cables: [
    { a: 0, b: 2 },
    { a: 2, b: 1 },
    { a: 1, b: 3 },
    { a: 3, b: 0 },
  ],
  cableRate: '1gbit',
  memoryShare: MEMORY,
};

/** tbf buckets: the smallest the lab allows (128 KiB), so a prefill's hidden states (≥ 256 KiB) see the rate. */
const BURST = 128 * 1024;

/** The rate of host `h`'s LAN port in `shape`. */
export const portRate = (shape: LabShape, h: number): string => shape.ports?.[h] ?? shape.lanRate;

/** Shapes the lab's LAN ports and cables (the lab was created with `shape.cables` as its links). */
export async function shapeLab(lab: Lab, shape: LabShape): Promise<void> {
  for (const l of shape.cables) await lab.setRate(l.a, l.b, shape.cableRate, BURST);
  for (let h = 0; h < shape.hosts; h++) await lab.setRate(h, 'lan', portRate(shape, h), BURST);
}

/** A node's flags in `shape`: python3 allowed, interfaces labelled, memory capped at its share of `modelBytes`. */
export function nodeArgsOf(lab: Lab, shape: LabShape, modelBytes: number): (h: number) => string[] {
  return (h) => [
    '--allow-exec=python3',
    '--iface-type',
    'lan0=ethernet',
    ...shape.cables
      .filter((l) => l.a === h || l.b === h)
      .flatMap((l) => ['--iface-type', `${lab.ifName(h, l.a === h ? l.b : l.a)}=thunderbolt`]),
    '--memory-limit',
    String(Math.floor((shape.memoryShare[h] ?? 1) * modelBytes)),
  ];
}

/** Every node known with memory and device figures, every LAN and cable link measured both ways. */
export function labReady(shape: LabShape): (vs: NodeView[]) => boolean {
  const links = shape.hosts * (shape.hosts - 1) + 2 * shape.cables.length;
  return (vs) =>
    vs.every(
      (v) =>
        v.topology.nodes.length === shape.hosts &&
        v.topology.nodes.every(
          (n) => n.memory && (n as { device?: { memoryBandwidthGBps?: number } }).device?.memoryBandwidthGBps,
        ) &&
        v.topology.links.length === links &&
        v.topology.links.every((l) => typeof l.bandwidthBps === 'number' && typeof l.rttMs === 'number'),
    );
}

/** `h0→h2→h1` for node ids, by the cluster's host numbers. */
export function labeller(c: NodeCluster): (ids: readonly string[]) => string {
  const names = new Map(c.nodes.map((n) => [n.id as string, `h${n.host}`]));
  return (ids) => ids.map((id) => names.get(id) ?? id).join('→');
}

/** `torus artifacts add DIR` on host 0 (a model artifact); its id once every node knows host 0 holds it whole. */
export async function addModel(c: NodeCluster, dir: string): Promise<string> {
  const holder = c.nodes[0]!;
  const add = await c.cli(0, ['artifacts', 'add', dir, '--name', 'model', '--data-dir', holder.dataDir], 300_000);
  if (add.code !== 0) throw new Error(`artifacts add: ${add.stderr}`);
  const id = add.stdout.trim().split('\n')[0]!;
  if (!/^[0-9a-f]{64}$/.test(id)) throw new Error(`artifacts add printed no id: ${add.stdout.slice(0, 200)}`);
  await c.until(
    'every node knows h0 holds the model',
    async () =>
      (
        await Promise.all(
          c.nodes.map((n) => n.tryGet<{ holders: { node: string; complete: boolean }[] }>(`/v1/artifacts/${id}`)),
        )
      ).every((a) => a?.holders.some((h) => h.node === holder.id && h.complete)),
    60_000,
  );
  return id;
}
