/**
 * The artifacts a runner needs before it starts (`workload.artifacts`). The runner supervisor (a
 * worker thread) asks this node-side gate, every half second until it answers `ready` or `failed`, whether this
 * node holds every artifact of an instance. The first time an artifact is missing the gate starts its transfer as
 * a link of a chain along the instance's ring order: each placed node fetches from the node before it, which
 * forwards chunks as it verifies them, so k placed nodes receive it in about one transfer (broadcast.ts). Every
 * node works out its own upstream from the replicated state alone, so no node has to order the others:
 *   - some placed node holds it complete: my upstream is the node before me in ring order (cyclic); walking back
 *     from me always reaches a complete holder, so the links never form a loop;
 *   - none does: the first node of the ring order fetches from a complete holder outside the placement (the best
 *     measured one), every other node from the node before it.
 * Complete holders are the fallback when an upstream fails (service.ts). A transfer that fails (refused, no
 * source for the stall time) fails the runner with its reason; `ready` carries the runner's environment.
 *
 * The gate can hold a `waiting` answer (GATE_HOLD_MS) and look again as soon as a transfer ends or a shard
 * directory is built, so a runner starts on the completion rather than at the supervisor's next ask.
 *
 * A workload's `model` (docs/artifacts.md, "Models"): on a node of a pipeline placement the gate fetches only its
 * stage's chunks (layers [fromLayer, toLayer), from every node holding them), then has the stage's shard directory
 * built from the store's partial copy, and answers `ready` with `TORUS_MODEL_DIR` naming it. Without a layer range
 * (tensor sharding, or a stage that is the whole model) the whole artifact is fetched like any other and
 * TORUS_MODEL_DIR names its files.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { asTorusError, TorusError } from '../protocols/errors.js';
import type { ClusterState } from '../actors/topology-keeper/state.js';
import { isHex64 } from './ids.js';
import type { ArtifactService } from './service.js';
import { sourcesFor } from './sources.js';
import { ModelDirectories } from './model/model-dirs.js';
import { anyChanged } from './change-signal.js';
import type { LayerRange } from './model/stage-chunks.js';

export interface RunnerArtifactsRequest {
  readonly instanceId: string;
  /** artifact ids, in the workload's order */
  readonly artifacts: readonly string[];
  /** the instance's ring (rank) order */
  readonly order: readonly string[];
  /** the workload's model artifact, and this node's pipeline stage of it (absent: the whole model) */
  readonly model?: { readonly id: string; readonly stage?: LayerRange };
}

export interface ArtifactProgress {
  readonly id: string;
  readonly haveBytes: number;
  readonly bytes: number;
  readonly rateBps: number;
}

export type RunnerArtifactsAnswer =
  | { readonly state: 'ready'; readonly env: Readonly<Record<string, string>> }
  | { readonly state: 'waiting'; readonly progress: readonly ArtifactProgress[] }
  | { readonly state: 'failed'; readonly reason: string };

const NODE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The supervisor's request, checked (it crosses a thread boundary as plain data). */
export function decodeRunnerArtifactsRequest(body: unknown): RunnerArtifactsRequest {
  const o = (body ?? {}) as Record<string, unknown>;
  const list = (v: unknown, ok: (x: unknown) => boolean, what: string): string[] => {
    if (!Array.isArray(v) || v.length > 1024 || !v.every(ok))
      throw new TorusError('TORUS_PROTOCOL_INVALID', `runner artifacts request: ${what}`);
    return v as string[];
  };
  if (typeof o.instanceId !== 'string' || o.instanceId.length === 0 || o.instanceId.length > 256)
    throw new TorusError('TORUS_PROTOCOL_INVALID', 'runner artifacts request: instanceId');
  return {
    instanceId: o.instanceId,
    artifacts: list(o.artifacts, (x) => typeof x === 'string' && isHex64(x), 'artifacts must be artifact ids'),
    order: list(o.order, (x) => typeof x === 'string' && NODE_ID.test(x), 'order must be node ids'),
    ...(o.model !== undefined ? { model: decodeModel(o.model) } : {}),
  };
}

const layer = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 1_000_000;

function decodeModel(v: unknown): { id: string; stage?: LayerRange } {
  const m = (v ?? {}) as Record<string, unknown>;
  if (!isHex64(m.id)) throw new TorusError('TORUS_PROTOCOL_INVALID', 'runner artifacts request: model.id');
  if (m.stage === undefined) return { id: m.id };
  const s = (m.stage ?? {}) as Record<string, unknown>;
  if (!layer(s.fromLayer) || !layer(s.toLayer) || s.fromLayer >= s.toLayer)
    throw new TorusError('TORUS_PROTOCOL_INVALID', 'runner artifacts request: model.stage must be layers [from, to)');
  return { id: m.id, stage: { fromLayer: s.fromLayer, toLayer: s.toLayer } };
}

/** Who `me` fetches `id` from in the instance's chain (see the file comment); undefined: any holder. */
export function chainUpstream(
  state: ClusterState,
  me: string,
  order: readonly string[],
  id: string,
): string | undefined {
  const record = state.artifacts && Object.hasOwn(state.artifacts, id) ? state.artifacts[id] : undefined;
  if (!record) return undefined;
  const complete = (n: string): boolean =>
    Object.hasOwn(record.holders, n) && record.holders[n]!.have === record.chunks;
  const i = order.indexOf(me);
  if (i < 0) return undefined;
  if (order.some(complete)) return order[(i - 1 + order.length) % order.length];
  if (i > 0) return order[i - 1];
  return sourcesFor(state, me, id).find((s) => s.have === s.chunks)?.nodeId;
}

/** `TORUS_ARTIFACT_<NAME>` (upper-cased, non-alphanumerics as `_`; the first artifact of a name wins) and `TORUS_ARTIFACT_<id12>`. */
export function artifactEnv(entries: readonly { id: string; name: string; path: string }[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of entries) {
    const key = `TORUS_ARTIFACT_${e.name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
    if (!Object.hasOwn(env, key)) env[key] = e.path;
  }
  // The id form is exact whatever the names are: it wins over a name that happens to look like an id.
  for (const e of entries) env[`TORUS_ARTIFACT_${e.id.slice(0, 12)}`] = e.path;
  return env;
}

/**
 * How long the node's gate holds a `waiting` answer for a change (a transfer ended, a shard directory built) before
 * it answers: the runner then starts on the completion itself, not at the supervisor's next ask. Well under the
 * supervisor's request timeout (10 s).
 */
export const GATE_HOLD_MS = 2000;

export class RunnerArtifactGate {
  /** per instance: when it first asked (a transfer that failed before that is retried, not held against it) */
  readonly #askedAt = new Map<string, number>();
  readonly #modelDirs = new ModelDirectories();
  readonly #holdMs: number;

  /** `holdMs`: how long a `waiting` answer waits for a change and looks again (0: answer at once) */
  constructor(
    private readonly service: ArtifactService,
    private readonly nodeId: string,
    o: { readonly holdMs?: number } = {},
  ) {
    this.#holdMs = o.holdMs ?? 0;
  }

  async prepare(request: RunnerArtifactsRequest): Promise<RunnerArtifactsAnswer> {
    const askedAt = this.#askedAt.get(request.instanceId) ?? Date.now();
    if (!this.#askedAt.has(request.instanceId)) {
      if (this.#askedAt.size >= 1024) this.#askedAt.delete(this.#askedAt.keys().next().value!);
      this.#askedAt.set(request.instanceId, askedAt);
    }
    const until = Date.now() + this.#holdMs;
    for (;;) {
      // Versions read before looking: a transfer that ends while we look wakes the wait below at once.
      const seen = [this.service.changes.version, this.#modelDirs.changes.version] as const;
      const answer = await this.#check(request, askedAt).catch(
        (error: unknown): RunnerArtifactsAnswer => ({ state: 'failed', reason: asTorusError(error).message }),
      );
      if (answer.state !== 'waiting') this.#askedAt.delete(request.instanceId);
      const left = until - Date.now();
      if (answer.state !== 'waiting' || left <= 0) return answer;
      const changed = await anyChanged(
        [
          [this.service.changes, seen[0]],
          [this.#modelDirs.changes, seen[1]],
        ],
        left,
      );
      if (!changed) return answer;
    }
  }

  async #check(r: RunnerArtifactsRequest, askedAt: number): Promise<RunnerArtifactsAnswer> {
    const store = this.service.store;
    let state: ClusterState | undefined;
    const progress: ArtifactProgress[] = [];
    const ready: { id: string; name: string; path: string }[] = [];
    const env: Record<string, string> = {};
    if (r.model) {
      const m = await this.#model(r.model, askedAt, progress);
      if (typeof m === 'object') return m;
      if (m !== undefined) env.TORUS_MODEL_DIR = m;
    }
    for (const id of r.artifacts) {
      const local = store.describe(id);
      if (local?.complete) {
        state ??= await this.service.clusterState();
        ready.push({ id, name: state.artifacts?.[id]?.name ?? local.name, path: this.#verifiedFiles(id) });
        continue;
      }
      const t = this.service.transfer(id);
      if (t && (t.state === 'running' || t.state === 'preparing')) {
        progress.push({ id, haveBytes: t.haveBytes, bytes: t.bytes, rateBps: t.rateBps });
        continue;
      }
      if (t?.state === 'failed' && t.startedAt >= askedAt) {
        return {
          state: 'failed',
          reason: `node ${this.nodeId} could not fetch artifact ${id} (${t.name}): ${t.error?.message ?? 'transfer failed'}`,
        };
      }
      state ??= await this.service.clusterState();
      const upstream = chainUpstream(state, this.nodeId, r.order, id);
      try {
        const started = await this.service.fetch(id, upstream ? { upstream } : {});
        progress.push({ id, haveBytes: started.haveBytes, bytes: started.bytes, rateBps: 0 });
      } catch (error) {
        return {
          state: 'failed',
          reason: `node ${this.nodeId} could not fetch artifact ${id}: ${asTorusError(error).message}`,
        };
      }
    }
    return progress.length > 0
      ? { state: 'waiting', progress }
      : { state: 'ready', env: { ...artifactEnv(ready), ...env } };
  }

  /**
   * The workload's model on this node: its TORUS_MODEL_DIR once the stage (or the whole model) is here and its
   * shard directory built; undefined while waiting (progress pushed); a failed answer.
   */
  async #model(
    m: NonNullable<RunnerArtifactsRequest['model']>,
    askedAt: number,
    progress: ArtifactProgress[],
  ): Promise<string | undefined | RunnerArtifactsAnswer> {
    const { id } = m;
    const state = await this.service.clusterState();
    const record = state.artifacts && Object.hasOwn(state.artifacts, id) ? state.artifacts[id] : undefined;
    const model = record?.model;
    const local = this.service.store.describe(id);
    if (!model && !local?.complete)
      return {
        state: 'failed',
        reason: record
          ? `artifact ${id} (${record.name}) is not a model artifact (no model record): it cannot be a workload's model`
          : `no node holds model artifact ${id}`,
      };
    const stage =
      m.stage && model && !(m.stage.fromLayer === 0 && m.stage.toLayer >= model.layers) ? m.stage : undefined;
    if (stage && model && stage.toLayer > model.layers)
      return {
        state: 'failed',
        reason: `node ${this.nodeId}'s layers ${stage.fromLayer}–${stage.toLayer} are past model ${id}'s ${model.layers} layers`,
      };
    if (!stage) {
      if (local?.complete) return this.#verifiedFiles(id);
    } else {
      const held = local?.complete ? { complete: true } : this.service.stageProgress(id, stage);
      if (held?.complete) {
        const dir = this.#modelDirs.get(
          model!,
          stage,
          this.service.store.paths(id).files,
          this.service.store.paths(id).shards,
        );
        if (dir.state === 'ready') return dir.dir;
        if (dir.state === 'failed') return { state: 'failed', reason: `node ${this.nodeId}: ${dir.reason}` };
        const p = this.service.stageProgress(id, stage);
        progress.push({ id, haveBytes: p?.haveBytes ?? 0, bytes: p?.bytes ?? 0, rateBps: 0 });
        return undefined;
      }
    }
    const t = this.service.transfer(id);
    if (t && (t.state === 'running' || t.state === 'preparing')) {
      progress.push({ id, haveBytes: t.haveBytes, bytes: t.bytes, rateBps: t.rateBps });
      return undefined;
    }
    if (t?.state === 'failed' && t.startedAt >= askedAt)
      return {
        state: 'failed',
        reason: `node ${this.nodeId} could not fetch model ${id} (${t.name}${stage ? `, layers ${stage.fromLayer}–${stage.toLayer}` : ''}): ${t.error?.message ?? 'transfer failed'}`,
      };
    try {
      const started = await this.service.fetch(id, stage ? { stage } : {});
      progress.push({ id, haveBytes: started.haveBytes, bytes: started.bytes, rateBps: 0 });
    } catch (error) {
      const e = asTorusError(error);
      // Another runner of this node fetches other layers of it: this one's turn comes when that ends.
      if (e.code === 'TORUS_ARTIFACT_BUSY') {
        progress.push({ id, haveBytes: 0, bytes: 0, rateBps: 0 });
        return undefined;
      }
      return { state: 'failed', reason: `node ${this.nodeId} could not fetch model ${id}: ${e.message}` };
    }
    return undefined;
  }

  /** The artifact's files directory, after a cheap check that every file still has its manifest size. */
  #verifiedFiles(id: string): string {
    const dir = this.service.store.paths(id).files;
    for (const f of this.service.store.manifest(id)!.manifest.files) {
      const size = statSync(join(dir, f.path), { throwIfNoEntry: false })?.size;
      if (size !== f.size)
        throw new TorusError(
          'TORUS_ARTIFACT_CORRUPT',
          `the stored copy of ${f.path} in artifact ${id} has ${size ?? 'no'} bytes, its manifest says ${f.size}: remove it and fetch it again`,
          { id, path: f.path },
        );
    }
    return dir;
  }
}
