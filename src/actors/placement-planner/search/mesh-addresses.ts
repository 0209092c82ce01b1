import { compareRingChoices, linkType, type AddressChoice } from './address-choice.js';
import type { ClusterIndex } from './cluster-index.js';

/**
 * Per placed node, its "mesh" address: one address of it that every other placed node has a link to. torch's
 * Gloo/NCCL connect every pair of ranks (a full mesh) through one interface per rank and dial rank 0's store at
 * MASTER_ADDR, so a ring address only the two neighbours reach (a Thunderbolt cable in a 4+ node ring) breaks
 * them. Preference: the node's ring address when all others reach it (a LAN, a 3-node triangle), else the common
 * address whose slowest link from the others is the best (measured bandwidth first, as for ring hops). A node
 * with no common address is left out (the runner then keeps its ring-address rule). Deterministic: from the
 * replicated plan input only, so every rank derives the same MASTER_ADDR.
 */
export function meshAddresses(
  index: ClusterIndex,
  members: readonly number[],
  ringAddresses: (member: number) => readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  if (members.length < 2) return out;
  for (const target of members) {
    const worst = commonChoices(index, members, target);
    if (worst.size === 0) continue;
    const ring = ringAddresses(target).find((ip) => worst.has(ip));
    const best = ring ?? [...worst.values()].sort(compareRingChoices)[0]?.ip;
    if (best !== undefined) out[index.ids[target] as string] = best;
  }
  return out;
}

/** The addresses of `target` every other member links to, each with its slowest (worst) link's choice. */
function commonChoices(index: ClusterIndex, members: readonly number[], target: number): Map<string, AddressChoice> {
  let common: Map<string, AddressChoice> | undefined;
  for (const source of members) {
    if (source === target) continue;
    const reached = new Map<string, AddressChoice>();
    for (const link of index.socket.get(source * index.n + target) ?? []) {
      const choice: AddressChoice = {
        ip: link.ip,
        type: linkType(link, index.nodes[target]),
        measured: link.bandwidthBps !== undefined,
        ...(link.bandwidthBps !== undefined ? { bandwidthBps: link.bandwidthBps } : {}),
        ...(link.rttMs !== undefined ? { rttMs: link.rttMs } : {}),
      };
      const seen = reached.get(link.ip);
      if (!seen || compareRingChoices(choice, seen) < 0) reached.set(link.ip, choice); // a source's best link to that IP
    }
    if (!common) {
      common = reached;
      continue;
    }
    for (const [ip, choice] of common) {
      const other = reached.get(ip);
      if (!other) common.delete(ip);
      else if (compareRingChoices(other, choice) > 0) common.set(ip, other); // keep the slowest source's link
    }
  }
  return common ?? new Map();
}

/**
 * The link each pipeline hop of `order` (rank r → rank r+1, the last back to rank 0) really takes when its ranks
 * connect over the mesh addresses (a torch job: Gloo dials each rank's mesh address, exec-env.ts): the source's
 * best link to the sink's mesh address. The ring addresses the plan would give its neighbours are the same ones
 * plan-placement.ts passes (each neighbour's ring choice of the node). A node with no mesh address keeps its ring
 * choice, as the runner does.
 */
export function meshHopChoices(index: ClusterIndex, order: readonly number[]): (AddressChoice | undefined)[] {
  const k = order.length;
  const ring = (from: number, to: number): AddressChoice | undefined => index.ringChoice[from * index.n + to];
  const mesh = meshAddresses(index, order, (m) => {
    const r = order.indexOf(m);
    const next = order[(r + 1) % k] as number,
      prev = order[(r - 1 + k) % k] as number;
    return [ring(next, m)?.ip ?? '', ring(prev, m)?.ip ?? ''];
  });
  return order.map((from, r) => {
    const to = order[(r + 1) % k] as number;
    const ip = mesh[index.ids[to] as string];
    if (ip === undefined) return ring(from, to);
    let best: AddressChoice | undefined;
    for (const link of index.socket.get(from * index.n + to) ?? []) {
      if (link.ip !== ip) continue;
      const choice: AddressChoice = {
        ip,
        type: linkType(link, index.nodes[to]),
        measured: link.bandwidthBps !== undefined,
        ...(link.bandwidthBps !== undefined ? { bandwidthBps: link.bandwidthBps } : {}),
        ...(link.rttMs !== undefined ? { rttMs: link.rttMs } : {}),
      };
      if (!best || compareRingChoices(choice, best) < 0) best = choice;
    }
    return best ?? ring(from, to);
  });
}
