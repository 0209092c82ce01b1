/**
 * The Jepsen-style checker, pure: given what clients were told (acknowledged creates and deletes), every node's
 * final state, committed log entries and leader claims, it lists every violation:
 * - an acknowledged write missing from (or an acknowledged delete still in) the final state of a node;
 * - two nodes whose committed logs differ at an index both hold (each committed log must be a prefix of the longest);
 * - a term in which two different nodes claimed to lead;
 * - final digests that differ;
 * - a check that would see nothing: writes were acknowledged, yet a node's log holds no committed entry, or no node
 *   claimed to lead (a log that could not be read, or status lines that no longer parse, must not pass as clean).
 */
export interface AckedOp {
  readonly op: 'create' | 'delete';
  readonly id: string;
  readonly at: number;
}

export interface NodeFinal {
  readonly name: string;
  readonly instances: readonly string[];
  readonly digest: string;
  /** Committed entries this node still holds (index → canonical text of term + event). */
  readonly committed: ReadonlyMap<number, string>;
  /** (term, leader) pairs this node saw itself claim as leader. */
  readonly leaderTerms: readonly number[];
}

export interface Verdict {
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly stats: Record<string, number>;
}

export function check(acked: readonly AckedOp[], finals: readonly NodeFinal[]): Verdict {
  const problems: string[] = [];
  // The last acknowledged op per id decides what must be there (clients never run two ops on one id at once).
  const want = new Map<string, 'create' | 'delete'>();
  for (const a of [...acked].sort((x, y) => x.at - y.at)) want.set(a.id, a.op);
  for (const n of finals) {
    const have = new Set(n.instances);
    for (const [id, op] of want) {
      if (op === 'create' && !have.has(id)) problems.push(`${n.name}: acknowledged create of ${id} is missing`);
      if (op === 'delete' && have.has(id)) problems.push(`${n.name}: acknowledged delete of ${id} did not hold`);
    }
  }
  const longest = [...finals].sort((a, b) => b.committed.size - a.committed.size)[0];
  if (longest) {
    for (const n of finals) {
      for (const [index, text] of n.committed) {
        const other = longest.committed.get(index);
        if (other !== undefined && other !== text)
          problems.push(`${n.name}: committed entry ${index} differs from ${longest.name}'s`);
      }
    }
  }
  const leaders = new Map<number, Set<string>>();
  for (const n of finals)
    for (const term of n.leaderTerms) {
      const set = leaders.get(term) ?? new Set<string>();
      set.add(n.name);
      leaders.set(term, set);
    }
  for (const [term, set] of leaders)
    if (set.size > 1) problems.push(`term ${term} had two leaders: ${[...set].join(', ')}`);
  if (acked.length > 0) {
    for (const n of finals)
      if (n.committed.size === 0) problems.push(`${n.name}: no committed entry in its log (nothing to compare)`);
    if (leaders.size === 0) problems.push('no node claimed to lead (nothing to check for two leaders)');
  }
  if (new Set(finals.map((f) => f.digest)).size > 1)
    problems.push(`digests differ: ${finals.map((f) => `${f.name}=${f.digest.slice(0, 8)}`).join(' ')}`);
  return {
    ok: problems.length === 0,
    problems,
    stats: {
      acked: acked.length,
      creates: acked.filter((a) => a.op === 'create').length,
      deletes: acked.filter((a) => a.op === 'delete').length,
      terms: leaders.size,
    },
  };
}
