import { Reader, type InputWhere } from './decode-helpers.js';

export type Sharding = 'pipeline' | 'tensor';
export type Backend = 'ring' | 'jaccl';

export interface Workload {
  readonly id: string;
  readonly memoryBytes: number;
  readonly layers: number;
  readonly hiddenSize?: number;
  readonly kvHeads?: number;
  readonly supportsTensor: boolean;
  /** bytes of the workload's artifacts (docs/artifacts.md): the explanation says how many each choice must move */
  readonly artifactBytes?: number;
}

/** What to place (the `--request` file of `torus plan`, or an API body). */
export interface PlacementRequest {
  readonly workload: Workload;
  readonly sharding: Sharding;
  readonly backend: Backend;
  readonly minNodes: number;
  readonly requiredNodes: readonly string[];
}

export function decodePlacementRequest(value: unknown, where: InputWhere = 'body', root = 'request'): PlacementRequest {
  const r = new Reader(where);
  const top = r.object(value, root, ['workload', 'sharding', 'backend', 'minNodes', 'requiredNodes']);
  const w = r.object(top.workload, `${root}.workload`, ['id', 'memoryBytes', 'layers', 'hiddenSize', 'kvHeads', 'supportsTensor', 'artifactBytes']);
  const p = `${root}.workload`;
  const workload: { -readonly [K in keyof Workload]: Workload[K] } = {
    id: r.string(w.id, `${p}.id`),
    memoryBytes: r.number(w.memoryBytes, `${p}.memoryBytes`, { min: 0 }),
    layers: r.number(w.layers, `${p}.layers`, { min: 1, integer: true }),
    supportsTensor: w.supportsTensor === undefined ? false : r.boolean(w.supportsTensor, `${p}.supportsTensor`),
  };
  if (w.hiddenSize !== undefined && w.hiddenSize !== null) workload.hiddenSize = r.number(w.hiddenSize, `${p}.hiddenSize`, { min: 1, integer: true });
  if (w.artifactBytes !== undefined && w.artifactBytes !== null) workload.artifactBytes = r.number(w.artifactBytes, `${p}.artifactBytes`, { min: 0, integer: true });
  if (w.kvHeads !== undefined && w.kvHeads !== null) workload.kvHeads = r.number(w.kvHeads, `${p}.kvHeads`, { min: 1, integer: true });
  const sharding = r.oneOf(top.sharding, `${root}.sharding`, ['pipeline', 'tensor'] as const);
  const backend = r.oneOf(top.backend, `${root}.backend`, ['ring', 'jaccl'] as const);
  const minNodes = top.minNodes === undefined ? 1 : r.number(top.minNodes, `${root}.minNodes`, { min: 1, integer: true });
  const requiredNodes = top.requiredNodes === undefined ? [] : r.array(top.requiredNodes, `${root}.requiredNodes`).map((id, i) => r.string(id, `${root}.requiredNodes[${i}]`));
  return { workload, sharding, backend, minNodes, requiredNodes: [...new Set(requiredNodes)] };
}
