/**
 * When the profiler may fill a link (pure; the statechart and the worker both ask it). A capacity probe saturates
 * the link for ~0.6 s per measurement, and on a switched LAN it loads both endpoints' uplinks: a job or the ring
 * benchmark running there at the same time loses that bandwidth (a 32 MiB all-reduce started right after
 * a cluster formed fell to 0.64 Gbit/s while the confirmation pass re-measured every link).
 *
 * Policy: a link source → sink is not capacity-probed while any instance (a job, the ring benchmark's instance)
 * has a node at either end — the probe would load that node's interface, whatever peer it goes to — and not until
 * `quietMs` after the last such instance ended there (a job restarted or re-placed at once, a benchmark's next
 * instance, is not hit in between). The link is only deferred: it stays queued and is measured once the
 * endpoints are free. This covers every capacity probe: new links, the confirmation pass ~15 s after formation,
 * re-measurement after an interface change and `POST /v1/links/measure`. Reachability rounds (small identity
 * requests) are not affected.
 */

/** An instance as far as the policy cares: its nodes and whether it still runs. */
export interface WorkInstance {
  readonly id: string;
  readonly nodes: readonly string[];
  readonly active: boolean;
}

/** Per node: the active instances on it, and when the last one there ended. */
export interface WorkState {
  readonly busy: Readonly<Record<string, readonly string[]>>;
  readonly freedAt: Readonly<Record<string, number>>;
}

export const NO_WORK: WorkState = Object.freeze({ busy: {}, freedAt: {} });

/** Quiet time after the last instance on a node ended before its links are probed again. */
export const DEFAULT_QUIET_MS = 5_000;

export type ProbeDecision =
  | { readonly probe: true }
  | { readonly probe: false; readonly reason: string; readonly until?: number };

/** Instance statuses (and job states) after which an instance no longer moves data. */
const FINISHED = new Set(['failed', 'completed', 'deleted', 'cancelled']);

/**
 * The instances of the topology keeper's `instances` answer (`{instances: [{id, plan: {nodes}, status, …}]}`).
 * Unknown shapes are skipped; a status this module does not know counts as active (deferring is the safe side).
 */
export function instancesFromAnswer(answer: unknown): WorkInstance[] {
  const list = (answer as { instances?: unknown } | null)?.instances;
  if (!Array.isArray(list)) return [];
  const out: WorkInstance[] = [];
  for (const raw of list as Record<string, unknown>[]) {
    const nodes = (raw?.plan as { nodes?: unknown } | undefined)?.nodes;
    if (typeof raw?.id !== 'string' || !Array.isArray(nodes)) continue;
    const job = raw.job as { state?: unknown } | undefined;
    const finished =
      FINISHED.has(String(raw.status)) || FINISHED.has(String(job?.state)) || FINISHED.has(String(raw.state));
    out.push({ id: raw.id, nodes: nodes.filter((n): n is string => typeof n === 'string'), active: !finished });
  }
  return out;
}

/** The work state after the instances now known: nodes that were busy and are not any more are freed `now`. */
export function updateWork(prev: WorkState, instances: readonly WorkInstance[], now: number): WorkState {
  const busy: Record<string, string[]> = {};
  for (const inst of instances) {
    if (!inst.active) continue;
    for (const node of inst.nodes) (busy[node] ??= []).push(inst.id);
  }
  const freedAt: Record<string, number> = { ...prev.freedAt };
  for (const node of Object.keys(prev.busy)) if (!busy[node]) freedAt[node] = now;
  for (const node of Object.keys(busy)) delete freedAt[node];
  return { busy, freedAt };
}

/** May this node (`self`) capacity-probe its link to `sink` now? */
export function probeDecision(
  work: WorkState,
  self: string,
  sink: string,
  now: number,
  quietMs = DEFAULT_QUIET_MS,
): ProbeDecision {
  for (const node of [self, sink]) {
    const ids = work.busy[node];
    if (ids && ids.length > 0) return { probe: false, reason: `instance ${ids[0]} runs on ${node}` };
  }
  let until = 0;
  for (const node of [self, sink]) {
    const freed = work.freedAt[node];
    if (freed !== undefined && now < freed + quietMs) until = Math.max(until, freed + quietMs);
  }
  return until > 0 ? { probe: false, reason: 'an instance just ended on an endpoint', until } : { probe: true };
}

/** Splits queued links (`{key, sink}`) into those that may be probed now and those deferred. */
export function linksToProbe<L extends { readonly sink: string }>(
  links: readonly L[],
  work: WorkState,
  self: string,
  now: number,
  quietMs = DEFAULT_QUIET_MS,
): { readonly now: L[]; readonly deferred: L[] } {
  const ready: L[] = [];
  const deferred: L[] = [];
  for (const l of links) (probeDecision(work, self, l.sink, now, quietMs).probe ? ready : deferred).push(l);
  return { now: ready, deferred };
}
