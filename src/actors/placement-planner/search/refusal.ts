import type { ClusterIndex } from './cluster-index.js';
import { formatBytes } from './format.js';
import type { PlacementRequest } from './placement-request.js';
import type { DropKind, Explanation, PlanResult, RefusalKind } from './plan-result.js';
import type { Evaluated, PlanningContext } from './select-set.js';

const refuse = (kind: RefusalKind, message: string, explanation: Explanation): PlanResult => ({
  refusal: { kind, message, explanation },
});

/** Refusals decided from the request and the node list alone, before any set is generated. */
export function earlyRefusal(
  index: ClusterIndex,
  request: PlacementRequest,
  base: Explanation,
): PlanResult | undefined {
  const w = request.workload;
  if (request.sharding === 'tensor') {
    if (!w.supportsTensor)
      return refuse(
        'tensor',
        `Requested tensor sharding but workload ${w.id} does not support tensor parallelism (supportsTensor is not true)`,
        base,
      );
    if (w.hiddenSize === undefined)
      return refuse(
        'tensor',
        `Requested tensor sharding but workload ${w.id} gives no hiddenSize to divide between nodes`,
        base,
      );
  }
  for (const id of request.requiredNodes) {
    const i = index.indexOf.get(id);
    if (i === undefined) return refuse('nodes', `Required node ${id} is not in the cluster state`, base);
    if (!index.nodes[i]?.memory)
      return refuse(
        'memory',
        `Required node ${id} has no memory figure, so it can be in no plan (every node needs one)`,
        base,
      );
  }
  const withMemory = index.nodes.filter((node) => node.memory);
  if (withMemory.length === 0)
    return refuse(
      'memory',
      `No node has reported its memory (${index.n} node(s) in the state): every node in a plan needs a memory figure`,
      base,
    );
  const needNodes = Math.max(request.minNodes, request.requiredNodes.length);
  if (needNodes > withMemory.length) {
    return refuse(
      'nodes',
      `Requested at least ${needNodes} nodes but only ${withMemory.length} node(s) have a memory figure (${index.n} in the state)`,
      base,
    );
  }
  const total = withMemory.reduce((s, node) => s + (node.memory?.ramAvailable ?? 0), 0);
  // A pinned set is judged on its own nodes (pinned-placement.ts), whose refusal names them.
  if (total < w.memoryBytes && !request.nodes) {
    return refuse(
      'memory',
      `Not enough memory for ${w.id}: it needs ${formatBytes(w.memoryBytes)}, all ${withMemory.length} node(s) together have ${formatBytes(total)} available`,
      base,
    );
  }
  return undefined;
}

const KIND_ORDER: readonly DropKind[] = ['memory', 'layers', 'rdma', 'coordinator', 'ring', 'network', 'preference'];

/** The refusal after every allowed size failed: the dominant reason first, then what each size lacked. */
export function composeRefusal(
  ctx: PlanningContext,
  explanation: Explanation,
  evaluated: readonly Evaluated[],
): PlanResult {
  const w = ctx.request.workload;
  const tally = new Map<RefusalKind, number>();
  const bump = (kind: RefusalKind): void => {
    tally.set(kind, (tally.get(kind) ?? 0) + 1);
  };
  const lines: string[] = [];
  // Sizes skipped for memory say little when some size had enough: then the evaluated sizes decide the kind.
  const anyEvaluated = explanation.sizes.some((s) => s.generation !== 'skipped');
  for (const size of explanation.sizes) {
    if (size.generation === 'skipped') {
      const skipKind: RefusalKind = size.why?.startsWith('tensor')
        ? 'tensor'
        : size.why?.startsWith('ring')
          ? 'ring'
          : 'memory';
      if (skipKind !== 'memory' || !anyEvaluated) bump(skipKind);
      lines.push(`${size.size} node(s): ${size.why ?? ''}`);
      continue;
    }
    const parts: string[] = [];
    for (const kind of KIND_ORDER) {
      const count = size.dropped[kind];
      if (!count) continue;
      if (kind !== 'network' && kind !== 'preference') bump(kind as RefusalKind);
      const example = evaluated.find((e) => e.members.length === size.size && e.dropped?.kind === kind);
      const names = example ? `{${example.members.map((m) => ctx.index.ids[m]).join(', ')}}` : '';
      parts.push(
        `${count} ${kind === 'memory' ? 'lack memory' : kind === 'ring' ? 'cannot form a ring' : `fail the ${kind} check`} (e.g. ${names}: ${example?.dropped?.why ?? ''})`,
      );
    }
    lines.push(`${size.size} node(s): ${size.sets} set(s) considered${parts.length ? `, ${parts.join(', ')}` : ''}`);
  }
  let kind: RefusalKind = 'ring';
  let most = -1;
  for (const k of ['memory', 'tensor', 'layers', 'rdma', 'coordinator', 'ring'] as const) {
    const count = tally.get(k) ?? 0;
    if (count > most) {
      most = count;
      kind = k;
    }
  }
  const low = Math.max(ctx.request.minNodes, ctx.required.length, 1);
  const heads: Record<RefusalKind, string> = {
    memory: `Not enough memory to place ${w.id} (needs ${formatBytes(w.memoryBytes)})`,
    tensor: `No allowed node count can shard ${w.id} by tensor (hidden size ${w.hiddenSize ?? '?'}${w.kvHeads !== undefined ? `, kv heads ${w.kvHeads}` : ''})`,
    layers: `${w.id} has ${w.layers} layers, too few to give every node of a pipeline one`,
    rdma: `The jaccl backend needs RDMA enabled on every node and RDMA links between every ordered pair, and no node set has them`,
    coordinator: `The jaccl backend needs a coordinator every node can reach by a socket link, and no node set has one`,
    ring: `No node set can form a ring: every node needs working links to both of its ring neighbours`,
    nodes: `Not enough nodes`,
  };
  const shown = lines.slice(0, 6);
  if (lines.length > shown.length) shown.push(`… ${lines.length - shown.length} more size(s)`);
  const detail = shown.length > 0 ? shown.join('; ') : `no set size from ${low} to ${ctx.eligible.length} is allowed`;
  return refuse(kind, `${heads[kind]}: ${detail}`, explanation);
}
