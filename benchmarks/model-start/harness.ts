/**
 * The model-start lab: real nodes (src/lab/node-cluster.ts) on shaped lab links — a cable ring h0-h1-h2-h3-h0 at
 * `ringRate` labelled thunderbolt beside a LAN at `lanRate`, and one slower host (the last, on the LAN only, its
 * port at `slowRate`) — with a model of `bytes` (benchmarks/model-fixture) added on h0, the only holder.
 * `placeAndStart` posts one exec instance whose runner only checks its directory and records when it started,
 * and measures it against the bound computed from the measured links (src/artifacts/distribution-bound.ts).
 * Used by the benchmark (index.ts) and its lab test (test/artifacts/lab-model-start.test.ts).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Lab, NodeCluster, type ClusterTest, type NodeProcess, type NodeView } from '../../src/lab/index.js';
import type { ClusterState } from '../../src/actors/topology-keeper/state.js';
import type { ModelRecord } from '../../src/protocols/model-record.js';
import { decodeManifest, chunkRefs, type Manifest } from '../../src/artifacts/manifest.js';
import { boundFromState } from '../../src/artifacts/state-bound.js';
import type { ChunkSet, DistributionBound } from '../../src/artifacts/distribution-bound.js';
import { stageChunks, chunksBytes } from '../../src/artifacts/model/stage-chunks.js';
import { stageTensors } from '../../src/artifacts/model/shard-writer.js';
import { makeModel } from '../model-fixture/make-model.js';
import { clusterCpu, runPhases, type RunPhases } from './phases.js';

export interface ModelLabOptions {
  readonly bytes: number;
  readonly lanRate?: string;
  readonly ringRate?: string;
  readonly slowRate?: string;
  /** 5 (default): 4 on the ring and the slower host, a spare for the lost stage */
  readonly hosts?: number;
  readonly layers?: number;
  readonly progress?: (line: string) => void;
}

export interface ModelLab {
  readonly lab: Lab;
  readonly cluster: NodeCluster;
  readonly id: string;
  readonly bytes: number;
  readonly manifest: Manifest;
  readonly holder: NodeProcess;
}

const RING = 4;

/**
 * Every link of the lab, both ways, measured (whatever they measured: on a loaded machine a cable may measure
 * slower than its shaping, and the bound is computed from what was measured).
 */
const measured =
  (hosts: number, cables: number) =>
  (vs: NodeView[]): boolean =>
    vs.every(
      (v) =>
        v.topology.nodes.length === hosts &&
        v.topology.nodes.every((n) => n.memory) &&
        v.topology.links.length === hosts * (hosts - 1) + 2 * cables &&
        v.topology.links.every((l) => typeof l.bandwidthBps === 'number'),
    );

/** `thunderbolt 3.1-3.9, ethernet 0.4-0.9 Gbit/s`: what the links measured, by type. */
function measuredRange(v: NodeView): string {
  const byType = new Map<string, number[]>();
  for (const l of v.topology.links)
    byType.set(l.type ?? '?', [...(byType.get(l.type ?? '?') ?? []), l.bandwidthBps ?? 0]);
  return [...byType]
    .map(([type, xs]) => `${type} ${(Math.min(...xs) / 1e9).toFixed(2)}-${(Math.max(...xs) / 1e9).toFixed(2)}`)
    .join(', ');
}

export async function startModelLab(owner: ClusterTest, o: ModelLabOptions): Promise<ModelLab> {
  const say = o.progress ?? (() => {});
  const hosts = o.hosts ?? 5;
  const links = Array.from({ length: RING }, (_, a) => ({
    a,
    b: (a + 1) % RING,
    rate: o.ringRate ?? '4gbit',
    label: 'thunderbolt',
  }));
  const lab = await Lab.create({ hosts, lanRate: o.lanRate ?? '1gbit', links });
  owner.teardown(() => lab.teardown());
  for (let h = RING; h < hosts; h++) await lab.setRate(h, 'lan', o.slowRate ?? '500mbit');
  const cableTypes = (h: number): string[] =>
    links
      .filter((l) => l.a === h || l.b === h)
      .flatMap((l) => ['--iface-type', `${lab.ifName(h, l.a === h ? l.b : l.a)}=thunderbolt`]);
  const cluster = await NodeCluster.start(owner, lab, {
    nodeArgs: (h) => ['--allow-exec', '--iface-type', 'lan0=ethernet', ...cableTypes(h)],
  });
  const t0 = Date.now();
  const views = await cluster.converged(300_000, measured(hosts, links.length));
  say(
    `${hosts} nodes agreed, every link measured in ${((Date.now() - t0) / 1000).toFixed(0)} s: ${measuredRange(views[0]!)} Gbit/s`,
  );
  const holder = cluster.nodes[0]!;
  const dir = join(cluster.tmpDir, 'model');
  const made = makeModel({ out: dir, bytes: o.bytes, layers: o.layers ?? 16, shards: 4 });
  const add = await cluster.cli(0, ['artifacts', 'add', dir, '--name', 'model', '--data-dir', holder.dataDir], 600_000);
  if (add.code !== 0) throw new Error(`artifacts add: ${add.stderr}`);
  const id = add.stdout.trim().split('\n')[0]!;
  await cluster.until(
    'every node knows h0 holds the model',
    async () =>
      (
        await Promise.all(
          cluster.nodes.map((n) => n.tryGet<{ holders: { node: string; complete: boolean }[] }>(`/v1/artifacts/${id}`)),
        )
      ).every((a) => a?.holders.some((h) => h.node === holder.id && h.complete)),
    60_000,
  );
  const manifest = decodeManifest(readFileSync(join(holder.dataDir, 'artifacts', id, 'manifest.json')), id);
  say(`model of ${made.bytes} bytes (${made.tensors} tensors) added on h0 as ${id.slice(0, 12)}`);
  return { lab, cluster, id, bytes: made.bytes, manifest, holder };
}

export interface PlacedNode {
  readonly node: string;
  readonly host: number;
  readonly rank: number;
  readonly layers: string;
  /** what the stage needs: its tensors' bytes (model) or the artifact's (whole) */
  readonly shardBytes: number;
  /** the chunks that cover them */
  readonly chunkBytes: number;
  /** what its node fetched for this run (null: not known, see fetchedBytes) */
  readonly receivedBytes: number | null;
}

export interface RunResult {
  readonly instanceId: string;
  readonly ok: boolean;
  readonly reason?: string;
  /** POST /v1/instances → every runner started, seconds */
  readonly seconds: number;
  readonly bound: DistributionBound | undefined;
  readonly nodes: readonly PlacedNode[];
  /** where the time went, per node (placeAndStart only) */
  readonly phases?: RunPhases;
}

interface Shard {
  node: string;
  rank: number;
  startLayer: number;
  endLayer: number;
}
interface InstanceAnswer {
  nodes: string[];
  plan?: { shards: Shard[] };
  status?: string;
  reason?: string;
}

/** When each rank's runner started (ms), from the markers its command wrote: the latest per rank after `since`. */
function started(markers: string, instanceId: string, since: number): Map<number, { at: number; node: string }> {
  const out = new Map<number, { at: number; node: string }>();
  if (!existsSync(markers)) return out;
  for (const f of readdirSync(markers)) {
    const m = /^(.+)-rank-(\d+)-\d+$/.exec(f);
    if (!m || m[1] !== instanceId) continue;
    const [at, node] = readFileSync(join(markers, f), 'utf8').trim().split(' ');
    const rank = Number(m[2]);
    if (Number(at) >= since && Number(at) > (out.get(rank)?.at ?? 0)) out.set(rank, { at: Number(at), node: node! });
  }
  return out;
}

/**
 * Bytes `node` fetched of artifact `id` in its last transfer, if that started after `since` (else 0); null when
 * that transfer found every chunk already there (its status replaced the one that fetched them: unknown).
 */
async function fetchedBytes(n: NodeProcess, id: string, since: number): Promise<number | null> {
  const ts = await n.get<{
    transfers: { id: string; startedAt: number; have: number; bySource?: Record<string, { bytes: number }> }[];
  }>('/v1/artifacts/transfers');
  const t = ts.transfers.find((x) => x.id === id && x.startedAt >= since);
  if (process.env.TORUS_BENCH_DEBUG)
    process.stderr.write(`[model-start] ${n.name} transfers since ${since}: ${JSON.stringify(ts.transfers)}\n`);
  const bytes = Object.values(t?.bySource ?? {}).reduce((s, x) => s + x.bytes, 0);
  return t && bytes === 0 && t.have > 0 ? null : bytes;
}

export interface PlaceOptions {
  readonly instanceId: string;
  /** `model`: the workload names the model (placement from the record, shards); `whole`: `artifacts: [id]` */
  readonly mode: 'model' | 'whole';
  readonly timeoutMs?: number;
  /** nodes the placement must include (the heal's instance names the holder, so that its spare is not the holder) */
  readonly requiredNodes?: readonly string[];
}

/** The environment variable the runner checks: the model's shard directory, or the whole artifact's files. */
const dirVariable = (m: ModelLab, mode: PlaceOptions['mode']): string =>
  mode === 'model' ? 'TORUS_MODEL_DIR' : `TORUS_ARTIFACT_${m.id.slice(0, 12)}`;

/** An API error's message on one line (the whole answer when it is not one). */
function errorMessage(text: string): string {
  try {
    return (JSON.parse(text) as { error: { message: string } }).error.message;
  } catch {
    return text.replace(/\s+/g, ' ').slice(0, 300);
  }
}

export async function placeAndStart(m: ModelLab, o: PlaceOptions): Promise<RunResult> {
  const markers = join(m.cluster.tmpDir, 'markers');
  mkdirSync(markers, { recursive: true });
  const dirVar = dirVariable(m, o.mode);
  // The runner: its directory must be there (else exit 3, which fails the job), then it says when it started.
  const script =
    `d="$${dirVar}"; [ -n "$d" ] && [ -d "$d" ] || exit 3; ` +
    `f=${markers}/${o.instanceId}-rank-$TORUS_RANK-$$; echo "$(date +%s%3N) $TORUS_NODE_ID" > $f.tmp && mv $f.tmp $f; exec sleep 3600`;
  const state = (await m.holder.get<{ state: ClusterState }>('/v1/state')).state;
  const cpuBefore = clusterCpu(m.cluster.live());
  const t0 = Date.now();
  const res = await m.holder.fetch('/v1/instances', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      instanceId: o.instanceId,
      minNodes: RING,
      ...(o.requiredNodes ? { requiredNodes: o.requiredNodes } : {}),
      workload: {
        kind: 'exec',
        id: `${o.instanceId}-job`,
        command: '/bin/sh',
        args: ['-c', script],
        ...(o.mode === 'model'
          ? { model: m.id }
          : { artifacts: [m.id], memoryBytes: m.bytes, layers: m.manifest.files.length > 0 ? 16 : 1 }),
      },
    }),
  });
  const text = await res.text();
  const committedAt = Date.now();
  if (res.status !== 201)
    return {
      instanceId: o.instanceId,
      ok: false,
      reason: `POST /v1/instances ${res.status}: ${errorMessage(text)}`,
      seconds: 0,
      bound: undefined,
      nodes: [],
    };
  const placed = JSON.parse(text) as InstanceAnswer;
  const shards = placed.plan?.shards ?? placed.nodes.map((node, rank) => ({ node, rank, startLayer: 0, endLayer: 0 }));
  let failure: string | undefined;
  const ranks = await m.cluster
    .until(
      'every runner started',
      async () => {
        const got = started(markers, o.instanceId, t0);
        if (got.size === shards.length) return got;
        const v = await m.holder.tryGet<InstanceAnswer>(`/v1/instances/${o.instanceId}`);
        if (v?.status === 'failed') {
          failure = v.reason ?? 'failed';
          return got;
        }
        return null;
      },
      o.timeoutMs ?? 900_000,
      100,
    )
    .catch((e: unknown) => {
      failure = (e as Error).message;
      return new Map<number, { at: number; node: string }>();
    });
  if (failure) return { instanceId: o.instanceId, ok: false, reason: failure, seconds: 0, bound: undefined, nodes: [] };
  const seconds = (Math.max(...[...ranks.values()].map((r) => r.at)) - t0) / 1000;
  const phases = await runPhases(m.cluster.live(), shards, m.id, t0, committedAt, ranks, cpuBefore);
  return { instanceId: o.instanceId, ok: true, seconds, phases, ...(await accounting(m, o.mode, state, shards, t0)) };
}

/** What each placed node needed and fetched, and the bound for those needs over the links measured before the POST. */
async function accounting(
  m: ModelLab,
  mode: PlaceOptions['mode'],
  state: ClusterState,
  shards: readonly Shard[],
  since: number,
): Promise<{ bound: DistributionBound | undefined; nodes: PlacedNode[] }> {
  const model = state.artifacts?.[m.id]?.model as ModelRecord | undefined;
  const lengths = chunkRefs(m.manifest).map((r) => r.length);
  const needs: Record<string, ChunkSet> = {};
  const nodes: PlacedNode[] = [];
  for (const s of shards) {
    const n = m.cluster.nodes.find((x) => x.id === s.node)!;
    const stage = { fromLayer: s.startLayer, toLayer: s.endLayer };
    const chunks = mode === 'model' && model ? stageChunks(m.manifest, model, stage) : ('all' as const);
    const tensorBytes =
      mode === 'model' && model
        ? (() => {
            const names = new Set(stageTensors(model, stage));
            return model.tensors.filter((x) => names.has(x[0])).reduce((a, x) => a + (x[5] - x[4]), 0);
          })()
        : m.bytes;
    if (n !== m.holder) needs[s.node] = chunks;
    nodes.push({
      node: s.node,
      host: n.host,
      rank: s.rank,
      layers: mode === 'model' ? `${s.startLayer}-${s.endLayer - 1}` : 'all',
      shardBytes: tensorBytes,
      chunkBytes: chunks === 'all' ? m.bytes : chunksBytes(m.manifest, chunks),
      receivedBytes: n === m.holder ? 0 : await fetchedBytes(n, m.id, since),
    });
  }
  return { bound: boundFromState(state, m.id, needs, lengths), nodes };
}

/** Deletes the instance and the artifact from every node but the holder, so the next run starts from one holder. */
export async function reset(m: ModelLab, instanceId: string): Promise<void> {
  await m.holder.fetch(`/v1/instances/${instanceId}`, { method: 'DELETE' });
  for (const n of m.cluster.live())
    if (n !== m.holder)
      await m.cluster.until(
        `${n.name} drops the artifact`,
        async () => {
          const r = await n.fetch(`/v1/artifacts/${m.id}`, { method: 'DELETE' }).catch(() => undefined);
          return r !== undefined && (r.status === 200 || r.status === 404);
        },
        60_000,
        500,
      );
}

export interface HealResult {
  readonly killed: string;
  readonly ok: boolean;
  readonly reason?: string;
  /** kill -9 → every rank's runner started again, seconds */
  readonly seconds: number;
  readonly replacement?: PlacedNode;
  /** the other placed nodes: what their last transfer fetched (0: nothing new) */
  readonly others: readonly PlacedNode[];
  /** the re-placed instance's reason (it says whether the surviving stages were kept) */
  readonly replacedWhy?: string;
}

/** kill -9 of the node of `rank` (never the holder), then until the job runs again on the re-placed instance. */
export async function killAndHeal(m: ModelLab, run: RunResult, mode: PlaceOptions['mode']): Promise<HealResult> {
  const markers = join(m.cluster.tmpDir, 'markers');
  const victim = run.nodes.filter((n) => n.node !== m.holder.id).sort((a, b) => b.rank - a.rank)[0]!;
  const proc = m.cluster.nodes.find((n) => n.id === victim.node)!;
  const before = new Set(run.nodes.map((n) => n.node));
  const t0 = Date.now();
  proc.kill('SIGKILL');
  let failure: string | undefined;
  const view = await m.cluster
    .until(
      'the job runs again',
      async () => {
        const v = await m.holder.tryGet<InstanceAnswer>(`/v1/instances/${run.instanceId}`);
        if (v?.status === 'failed') {
          failure = v.reason ?? 'failed';
          return v;
        }
        const got = started(markers, run.instanceId, t0);
        return v && !v.nodes.includes(victim.node) && got.size === v.nodes.length && v;
      },
      900_000,
      100,
    )
    .catch((e: unknown) => {
      failure = (e as Error).message;
      return undefined;
    });
  if (failure || !view) return { killed: victim.node, ok: false, reason: failure ?? 'no view', seconds: 0, others: [] };
  const got = started(markers, run.instanceId, t0);
  const seconds = (Math.max(...[...got.values()].map((r) => r.at)) - t0) / 1000;
  const state = (await m.holder.get<{ state: ClusterState }>('/v1/state')).state;
  const shards = view.plan?.shards ?? view.nodes.map((node, rank) => ({ node, rank, startLayer: 0, endLayer: 0 }));
  const { nodes } = await accounting(m, mode, state, shards, t0);
  const replacement = nodes.find((n) => !before.has(n.node));
  return {
    killed: victim.node,
    ok: true,
    seconds,
    ...(replacement ? { replacement } : {}),
    others: nodes.filter((n) => n !== replacement),
    ...(view.reason ? { replacedWhy: view.reason } : {}),
  };
}
