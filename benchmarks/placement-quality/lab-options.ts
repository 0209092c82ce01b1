/**
 * The pure half of the measured placement-quality benchmark: every feasible pipeline option of a cluster state
 * (node sets of every size × ring orders), each priced by the cost model, and exo's rule as a baseline.
 * An option runs with the planner's addresses (measured first) and its layer split (by memory), as a pinned
 * `POST /v1/bench/pipeline` does. Ring orders are counted once per cycle: a rotation is the same pipeline (every
 * stage and hop is paid once per step) and, on links shaped alike both ways, so is the reverse.
 */
import { indexCluster, type ClusterIndex } from '../../src/actors/placement-planner/search/cluster-index.js';
import { decodePlacementInput } from '../../src/actors/placement-planner/search/placement-input.js';
import { predictPipeline, type Prediction } from '../../src/actors/placement-planner/search/cost-model.js';
import { findShareShortfall, splitLayersByMemory } from '../../src/actors/placement-planner/search/layer-split.js';
import {
  decodePlacementRequest,
  type PlacementRequest,
} from '../../src/actors/placement-planner/search/placement-request.js';
import { planPlacement } from '../../src/actors/placement-planner/search/plan-placement.js';
import { isRefusal } from '../../src/actors/placement-planner/search/plan-result.js';

export interface LabOption {
  /** ring (rank) order, node ids */
  readonly nodes: readonly string[];
  /** layers per rank */
  readonly layers: readonly number[];
  readonly predicted: Prediction;
}

/** GET /v1/topology → the planner's state format (the same fields toPlacementState reads). */
export function placementStateFromTopology(view: {
  nodes: readonly Record<string, unknown>[];
  links: readonly Record<string, unknown>[];
}): { nodes: Record<string, unknown>[]; links: Record<string, unknown>[] } {
  const pick = (o: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> =>
    Object.fromEntries(keys.filter((k) => o[k] !== undefined && o[k] !== null).map((k) => [k, o[k]]));
  return {
    nodes: view.nodes.map((n) => {
      const out = pick(n, ['id', 'memory', 'interfaces']);
      out.interfaces ??= [];
      const device = n.device as Record<string, unknown> | undefined;
      if (device) out.device = pick(device, ['memoryBandwidthGBps', 'gflops']);
      if (out.memory) out.memory = pick(out.memory as Record<string, unknown>, ['ramAvailable', 'ramTotal']);
      return out;
    }),
    links: view.links.map((l) => pick(l, ['source', 'sink', 'ip', 'type', 'rttMs', 'bandwidthBps'])),
  };
}

/** One name per cycle: rotated to start at its smallest id, then the smaller of the two directions. */
export function cycleKey(nodes: readonly string[]): string {
  const k = nodes.length;
  const start = nodes.indexOf([...nodes].sort()[0] as string);
  const forward = nodes.map((_, i) => nodes[(start + i) % k] as string);
  const backward = nodes.map((_, i) => nodes[(start - i + k) % k] as string);
  const [a, b] = [forward.join(','), backward.join(',')];
  return a <= b ? a : b;
}

/** Every subset (as sorted member indices) of 0..n-1 with at least one member. */
function* subsets(n: number): Generator<number[]> {
  for (let mask = 1; mask < 1 << n; mask++) {
    const members: number[] = [];
    for (let i = 0; i < n; i++) if (mask & (1 << i)) members.push(i);
    yield members;
  }
}

/** Orders of `members` with members[0] first and, from 3 nodes on, second < last: each cycle once. */
export function ringOrders(members: readonly number[]): number[][] {
  const [first, ...rest] = members;
  if (first === undefined) return [];
  const out: number[][] = [];
  const visit = (prefix: number[], left: number[]): void => {
    if (left.length === 0) {
      if (prefix.length < 3 || (prefix[1] as number) < (prefix[prefix.length - 1] as number)) out.push(prefix);
      return;
    }
    left.forEach((x, i) => visit([...prefix, x], [...left.slice(0, i), ...left.slice(i + 1)]));
  };
  visit([first], rest);
  return out;
}

const linked = (index: ClusterIndex, order: readonly number[]): boolean =>
  order.length === 1 ||
  order.every((m, r) => index.hop[m * index.n + (order[(r + 1) % order.length] as number)] !== -Infinity);

/**
 * Every feasible pipeline option: enough memory in the set and on each node for its share (rule 3), at least one
 * layer per node, and a usable link both ways on every ring hop. Sorted by predicted step time.
 */
export function feasibleOptions(state: unknown, requestBody: unknown): LabOption[] {
  const request: PlacementRequest = decodePlacementRequest(requestBody);
  const index = indexCluster(decodePlacementInput(state), 'ring');
  const w = request.workload;
  const out: LabOption[] = [];
  for (const members of subsets(index.n)) {
    const available = members.map((m) => index.nodes[m]?.memory?.ramAvailable ?? Number.NaN);
    if (available.some(Number.isNaN) || members.length > w.layers) continue;
    if (available.reduce((s, x) => s + x, 0) < w.memoryBytes) continue;
    const split = splitLayersByMemory(w.layers, available);
    if (findShareShortfall(w.memoryBytes, w.layers, split, available)) continue;
    const layersOf = new Map(members.map((m, i) => [m, split[i] as number]));
    for (const order of ringOrders(members)) {
      if (!linked(index, order)) continue;
      const layers = order.map((m) => layersOf.get(m) as number);
      out.push({
        nodes: order.map((m) => index.ids[m] as string),
        layers,
        predicted: predictPipeline(index, order, layers, w, request.objective),
      });
    }
  }
  return out.sort((a, b) => (a.predicted.stepMs ?? Infinity) - (b.predicted.stepMs ?? Infinity));
}

/**
 * exo's rule on the same cluster: the smallest feasible set, ring addresses by interface label. The planner
 * without device figures and without link measurements is that rule (docs/placement.md, rules 1–6: with nothing
 * measured, addresses follow exo's label table). Returns its ring order and, per rank, the address it dials next.
 */
export function exoRuleOption(
  state: { nodes: Record<string, unknown>[]; links: Record<string, unknown>[] },
  requestBody: unknown,
): { nodes: string[]; nextHop: string[] } | undefined {
  const bare = {
    nodes: state.nodes.map(({ device: _device, ...n }) => n),
    links: state.links.map(({ bandwidthBps: _bw, rttMs: _rtt, ...l }) => l),
  };
  const result = planPlacement(decodePlacementInput(bare), decodePlacementRequest(requestBody), { seed: 1 });
  if (isRefusal(result)) return undefined;
  const nodes = [...result.instance.nodes];
  const nextHop = nodes.map((node, rank) => result.instance.hostsByNode?.[node]?.[(rank + 1) % nodes.length]?.ip ?? '');
  return { nodes, nextHop };
}

/** Per rank, the address the planner (measured first) dials the next rank at, for comparison with exo's labels. */
export function measuredNextHops(state: unknown, nodes: readonly string[]): string[] {
  const index = indexCluster(decodePlacementInput(state), 'ring');
  return nodes.map((id, r) => {
    const from = index.indexOf.get(id) as number;
    const to = index.indexOf.get(nodes[(r + 1) % nodes.length] as string) as number;
    return nodes.length > 1 ? (index.ringChoice[from * index.n + to]?.ip ?? '') : '';
  });
}
