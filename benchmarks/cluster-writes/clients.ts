/**
 * The cluster-writes benchmark's clients and its check. Only an acknowledged write counts, a refused one fails
 * the run (a writes/s figure that counts refusals cannot tell a commit from an error), and afterwards every
 * acknowledged write must be in every node's applied log at the index it was acknowledged with.
 */
import { isDeepStrictEqual } from 'node:util';
import type { AppliedLog, ProposeAnswer } from './proc.js';

export interface AckedWrite {
  readonly index: number;
  readonly event: unknown;
}

/**
 * `clients` concurrent clients, each proposing writes one after another until `total` have been sent. Resolves
 * with every acknowledged write once all are answered; rejects naming the first refusal (after the writes
 * already in flight are answered, so no client is left running).
 */
export async function runClients(
  clients: number,
  total: number,
  propose: (client: number) => { event: unknown; answer: Promise<ProposeAnswer> },
): Promise<AckedWrite[]> {
  const acked: AckedWrite[] = [];
  let sent = 0;
  let refusal: string | null = null;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (sent < total && refusal === null) {
        sent++;
        const { event, answer } = propose(c);
        const a = await answer;
        if (a.ok) acked.push({ index: a.index, event });
        else refusal ??= a.error;
      }
    }),
  );
  if (refusal !== null)
    throw new Error(`a write was refused (${acked.length} of ${sent} sent were acknowledged): ${refusal}`);
  return acked;
}

/** Every acknowledged write missing from a node's applied log, or different there, as one line each. */
export function missingWrites(acked: readonly AckedWrite[], nodes: readonly { name: string; log: AppliedLog }[]) {
  const problems: string[] = [];
  for (const { name, log } of nodes) {
    const byIndex = new Map(log.entries.map((e) => [e.index, e.event]));
    const snapshotUpTo = Math.max(0, ...log.installed);
    for (const w of acked) {
      if (w.index <= snapshotUpTo) {
        problems.push(`${name}: write at index ${w.index} came in a snapshot (up to ${snapshotUpTo}), not checked`);
        continue;
      }
      if (!byIndex.has(w.index)) problems.push(`${name}: acknowledged write at index ${w.index} is not in its log`);
      else if (!isDeepStrictEqual(byIndex.get(w.index), w.event))
        problems.push(`${name}: index ${w.index} holds ${JSON.stringify(byIndex.get(w.index))}, not the write`);
    }
  }
  return problems;
}
