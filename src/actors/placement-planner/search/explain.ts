import type { AddressChoice } from './address-choice.js';
import type { ClusterIndex } from './cluster-index.js';
import type { CandidateNote, HopDirection, HopExplanation } from './plan-result.js';
import { MAX_CANDIDATE_NOTES } from './plan-result.js';
import type { Evaluated } from './select-set.js';

export const GIB = 2 ** 30;

export function hopDirection(choice: AddressChoice | undefined): HopDirection | null {
  if (!choice) return null;
  return {
    ip: choice.ip,
    type: choice.type,
    measured: choice.measured,
    bandwidthBps: choice.bandwidthBps ?? null,
    rttMs: choice.rttMs ?? null,
  };
}

/** Per ring hop (rank r → r+1), the address each side uses and what is known about it. */
export function explainHops(index: ClusterIndex, order: readonly number[]): HopExplanation[] {
  if (order.length < 2) return [];
  const hops: HopExplanation[] = [];
  const count = order.length === 2 ? 1 : order.length; // a ring of two has one physical hop
  for (let i = 0; i < count; i++) {
    const a = order[i] as number,
      b = order[(i + 1) % order.length] as number;
    hops.push({
      from: index.ids[a] as string,
      to: index.ids[b] as string,
      forward: hopDirection(index.ringChoice[a * index.n + b]),
      backward: hopDirection(index.ringChoice[b * index.n + a]),
    });
  }
  return hops;
}

/**
 * Predicted time of a 1 GiB ring all-reduce (reduce-scatter + all-gather): 2(k−1) steps, each moving
 * 1 GiB / k over the slowest hop and paying one one-way latency (half the largest hop RTT). Null when any hop
 * has no measured bandwidth: a label is not a speed.
 */
export function predictAllReduce(
  hops: readonly HopExplanation[],
  k: number,
): { seconds: number | null; basis: string } {
  if (k < 2) return { seconds: 0, basis: 'single node: no network traffic' };
  let slowest = Number.POSITIVE_INFINITY,
    rtt = 0;
  for (const hop of hops) {
    for (const d of [hop.forward, hop.backward]) {
      if (!d || d.bandwidthBps === null)
        return { seconds: null, basis: `hop ${hop.from} ↔ ${hop.to} has no measured bandwidth` };
      slowest = Math.min(slowest, d.bandwidthBps);
      rtt = Math.max(rtt, d.rttMs ?? 0);
    }
  }
  if (slowest <= 0) return { seconds: null, basis: 'a hop measured 0 bandwidth' };
  const steps = 2 * (k - 1);
  const seconds = steps * (GIB / k / (slowest / 8) + rtt / 2000);
  return {
    seconds: Math.round(seconds * 1e6) / 1e6,
    basis: `2(k-1)=${steps} steps of 1 GiB/${k} at the slowest hop's ${slowest} bit/s plus half the largest RTT (${rtt} ms) each`,
  };
}

/** The candidate list of an explanation: the chosen set first, then others in evaluation order, capped. */
export function candidateNotes(
  index: ClusterIndex,
  evaluated: readonly Evaluated[],
  bytesToMove?: (members: readonly number[]) => number,
  chosenWhy = 'best by the preference order',
): { notes: CandidateNote[]; omitted: number } {
  const names = (e: Evaluated): string[] => e.members.map((m) => index.ids[m] as string);
  const moved = (e: Evaluated) => (bytesToMove ? { bytesToMove: bytesToMove(e.members) } : {});
  const all: CandidateNote[] = [];
  for (const e of evaluated) {
    if (e.chosen) all.unshift({ nodes: names(e), outcome: 'chosen', why: chosenWhy, ...moved(e) });
    else if (e.dropped)
      all.push({ nodes: names(e), outcome: 'dropped', kind: e.dropped.kind, why: e.dropped.why, ...moved(e) });
    else
      all.push({
        nodes: names(e),
        outcome: 'not-evaluated',
        kind: 'preference',
        why: e.notEvaluated ?? 'not needed',
        ...moved(e),
      });
  }
  return { notes: all.slice(0, MAX_CANDIDATE_NOTES), omitted: Math.max(0, all.length - MAX_CANDIDATE_NOTES) };
}
