/**
 * An instance's artifacts as the instance view shows them (`GET /v1/instances/:id` → `artifacts`): per artifact of
 * the workload, per placed node, how many bytes it holds and the rate it is receiving at, from the holdings in the
 * replicated state (each node reports them every 2 s while a transfer runs). While partial, `haveBytes` is the
 * verified chunks times the artifact's mean chunk size (exact once complete). The workload's model on a pipeline
 * placement: per node its stage (`layers`, end exclusive), `bytes` the stage's share of the model and `haveBytes`
 * how far it has come (the stage's chunks held, from the node's stage holding), complete once the stage is here.
 * `bound`: the time no schedule beats for what the placed nodes still lack, over the measured links
 * (state-bound.ts; a partial holder's chunks are known by count only, so they count as its first ones).
 */
import type { ClusterState } from '../actors/topology-keeper/state.js';
import { boundFromState, boundView, type BoundView } from './state-bound.js';

export interface InstanceArtifactNode {
  readonly node: string;
  readonly haveBytes: number;
  readonly complete: boolean;
  readonly rateBps?: number;
  /** a model's pipeline stage on this node: its layers [from, to) */
  readonly layers?: readonly [number, number];
  /** what this node needs of it (its stage's chunks, as mean-size chunks), when not the whole artifact */
  readonly bytes?: number;
}
export interface InstanceArtifactView {
  readonly id: string;
  readonly name: string;
  readonly bytes: number;
  readonly nodes: readonly InstanceArtifactNode[];
  readonly bound?: BoundView;
}

export function instanceArtifacts(
  state: ClusterState,
  ids: readonly string[],
  nodes: readonly string[],
  /** the model artifact and each node's pipeline stage of it */
  model?: { readonly id: string; readonly stages: Readonly<Record<string, readonly [number, number]>> },
): InstanceArtifactView[] {
  return ids.map((id) => {
    const r = state.artifacts && Object.hasOwn(state.artifacts, id) ? state.artifacts[id] : undefined;
    if (!r)
      return {
        id,
        name: id.slice(0, 12),
        bytes: 0,
        nodes: nodes.map((node) => ({ node, haveBytes: 0, complete: false })),
      };
    const lacking = nodes.filter((n) => !(Object.hasOwn(r.holders, n) && r.holders[n]!.have === r.chunks));
    const partial = Object.fromEntries(
      lacking.map((n) => [
        n,
        Array.from({ length: Object.hasOwn(r.holders, n) ? r.holders[n]!.have : 0 }, (_, i) => i),
      ]),
    );
    const bound = boundView(
      boundFromState(state, id, Object.fromEntries(lacking.map((n) => [n, 'all' as const])), undefined, partial),
    );
    return {
      id,
      name: r.name,
      bytes: r.bytes,
      ...(bound ? { bound } : {}),
      nodes: nodes.map((node) => {
        const h = Object.hasOwn(r.holders, node) ? r.holders[node] : undefined;
        const layers = model?.id === id && Object.hasOwn(model.stages, node) ? model.stages[node] : undefined;
        const s = h?.stage;
        if (layers && h?.have !== r.chunks) {
          const mean = r.chunks > 0 ? r.bytes / r.chunks : 0;
          const mine = s && s.fromLayer === layers[0] && s.toLayer === layers[1] ? s : undefined;
          return {
            node,
            haveBytes: Math.round((mine?.have ?? 0) * mean),
            complete: !!mine && mine.have === mine.chunks,
            layers,
            ...(mine ? { bytes: Math.round(mine.chunks * mean) } : {}),
            ...(h?.rateBps && !(mine && mine.have === mine.chunks) ? { rateBps: h.rateBps } : {}),
          };
        }
        const complete = !!h && h.have === r.chunks;
        const haveBytes = complete
          ? r.bytes
          : h && r.chunks > 0
            ? Math.min(r.bytes, Math.round((h.have * r.bytes) / r.chunks))
            : 0;
        return {
          node,
          haveBytes,
          complete,
          ...(h?.rateBps && !complete ? { rateBps: h.rateBps } : {}),
          ...(layers ? { layers } : {}),
        };
      }),
    };
  });
}
