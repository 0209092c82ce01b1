/**
 * Broadcast as a pipeline: k nodes that need an artifact form a chain behind one complete holder, in the order
 * given (the plan's ring order when it is for an instance); each node fetches from its upstream neighbour, which
 * serves chunk i as soon as it has verified it. Every link of the chain carries the artifact once, at the same
 * time, so k nodes receive it in about the time of one transfer instead of k (each hop adds one chunk of delay).
 * Nodes are ordered one by one from the head: a node that refuses (e.g. not enough disk) is reported and left out,
 * and the next one is linked to the last node that accepted.
 */
import { TorusError, asTorusError } from '../protocols/errors.js';
import type { ClusterState } from '../actors/topology-keeper/state.js';

export interface BroadcastAnswer {
  readonly id: string;
  /** the head (a complete holder), then the nodes receiving, in chain order */
  readonly chain: readonly string[];
  readonly alreadyHeld: readonly string[];
  readonly refused: readonly { readonly node: string; readonly code: string; readonly message: string }[];
}

export interface BroadcastPlanInput {
  readonly state: ClusterState;
  readonly me: string;
  readonly id: string;
  readonly nodes: readonly string[];
  /** tells `node` to fetch from `upstream` (resolves once it accepted) */
  readonly order: (node: string, upstream: string) => Promise<unknown>;
}

export async function planBroadcast(i: BroadcastPlanInput): Promise<BroadcastAnswer> {
  const record = i.state.artifacts && Object.hasOwn(i.state.artifacts, i.id) ? i.state.artifacts[i.id] : undefined;
  if (!record) throw new TorusError('TORUS_ARTIFACT_UNKNOWN', `no node holds artifact ${i.id}`, { id: i.id });
  const unknown = i.nodes.filter((n) => !Object.hasOwn(i.state.nodes, n));
  if (unknown.length > 0)
    throw new TorusError('TORUS_NODE_UNKNOWN', `not in the cluster: ${unknown.join(', ')}`, { unknown });
  const complete = (n: string): boolean =>
    Object.hasOwn(record.holders, n) && record.holders[n]!.have === record.chunks;
  const holders = Object.keys(record.holders).filter(complete).sort();
  if (holders.length === 0)
    throw new TorusError('TORUS_ARTIFACT_UNAVAILABLE', `no node holds all of artifact ${i.id}`, { id: i.id });
  // The head: a complete holder among the targets (first in order), else this node, else the first by id.
  const head = i.nodes.find(complete) ?? (complete(i.me) ? i.me : holders[0]!);
  const alreadyHeld = i.nodes.filter(complete);
  const chain = [head];
  const refused: { node: string; code: string; message: string }[] = [];
  for (const node of i.nodes) {
    if (complete(node) || chain.includes(node)) continue;
    try {
      await i.order(node, chain[chain.length - 1]!);
      chain.push(node);
    } catch (error) {
      const e = asTorusError(error);
      refused.push({ node, code: e.code, message: e.message });
    }
  }
  return { id: i.id, chain, alreadyHeld, refused };
}
