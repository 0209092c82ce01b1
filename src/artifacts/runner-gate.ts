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
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { asTorusError, TorusError } from '../protocols/errors.js';
import type { ClusterState } from '../actors/topology-keeper/state.js';
import { isHex64 } from './ids.js';
import type { ArtifactService } from './service.js';
import { sourcesFor } from './sources.js';

export interface RunnerArtifactsRequest {
  readonly instanceId: string;
  /** artifact ids, in the workload's order */
  readonly artifacts: readonly string[];
  /** the instance's ring (rank) order */
  readonly order: readonly string[];
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
  };
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

export class RunnerArtifactGate {
  /** per instance: when it first asked (a transfer that failed before that is retried, not held against it) */
  readonly #askedAt = new Map<string, number>();

  constructor(
    private readonly service: ArtifactService,
    private readonly nodeId: string,
  ) {}

  async prepare(request: RunnerArtifactsRequest): Promise<RunnerArtifactsAnswer> {
    const askedAt = this.#askedAt.get(request.instanceId) ?? Date.now();
    if (!this.#askedAt.has(request.instanceId)) {
      if (this.#askedAt.size >= 1024) this.#askedAt.delete(this.#askedAt.keys().next().value!);
      this.#askedAt.set(request.instanceId, askedAt);
    }
    const answer = await this.#check(request, askedAt).catch(
      (error: unknown): RunnerArtifactsAnswer => ({ state: 'failed', reason: asTorusError(error).message }),
    );
    if (answer.state !== 'waiting') this.#askedAt.delete(request.instanceId);
    return answer;
  }

  async #check(r: RunnerArtifactsRequest, askedAt: number): Promise<RunnerArtifactsAnswer> {
    const store = this.service.store;
    let state: ClusterState | undefined;
    const progress: ArtifactProgress[] = [];
    const ready: { id: string; name: string; path: string }[] = [];
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
    return progress.length > 0 ? { state: 'waiting', progress } : { state: 'ready', env: artifactEnv(ready) };
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
